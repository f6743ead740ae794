#include "proto/jsonrpc/workspace_json.hpp"

#include <cctype>
#include <csignal>

#include <cmath>

#include "proto/jsonrpc/exec_params.hpp"
#include "proto/jsonrpc/param_values.hpp"
#include "proto/jsonrpc/result_json.hpp"

namespace corral {

using nlohmann::json;

namespace {

failure unknown(const std::string& key, const std::string& method) {
  return make_failure(failure_kind::invalid_request, "unknown parameter \"" + key + "\" for " + method);
}

expected<std::uint32_t> mode_param(const json& v, const std::string& name) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    return bad_param(name, "permission bits from 0 to 0777 (an integer, e.g. 420 for 0644)");
  auto m = v.get<std::uint64_t>();
  if (m > 0777) return bad_param(name, "permission bits from 0 to 0777 (an integer, e.g. 420 for 0644)");
  return static_cast<std::uint32_t>(m);
}

expected<std::uint64_t> offset_param(const json& v, const std::string& name) {
  if (v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0)) return v.get<std::uint64_t>();
  return bad_param(name, "an integer of 0 or more");
}

const char* op_name(file_call::op op) {
  switch (op) {
    case file_call::op::read: return "read";
    case file_call::op::write: return "write";
    case file_call::op::append: return "append";
    case file_call::op::list: return "list";
    case file_call::op::stat: return "stat";
    case file_call::op::mkdir: return "mkdir";
    case file_call::op::remove: return "remove";
    case file_call::op::move: return "move";
  }
  return "stat";
}

std::optional<file_call::op> op_named(const std::string& name) {
  for (auto op : {file_call::op::read, file_call::op::write, file_call::op::append, file_call::op::list,
                  file_call::op::stat, file_call::op::mkdir, file_call::op::remove, file_call::op::move})
    if (name == op_name(op)) return op;
  return std::nullopt;
}

// Which members each op reads besides `workspace`; anything else is refused.
bool op_takes(file_call::op op, const std::string& key) {
  using o = file_call::op;
  if (key == "path") return op != o::move;
  switch (op) {
    case o::read: return key == "offset" || key == "length";
    case o::write: return key == "data" || key == "data_base64" || key == "mode" || key == "parents";
    case o::append: return key == "data" || key == "data_base64";
    case o::list: return key == "depth" || key == "max_entries";
    case o::stat: return false;
    case o::mkdir: return key == "mode" || key == "parents";
    case o::remove: return key == "recursive";
    case o::move: return key == "from" || key == "to";
  }
  return false;
}

const char* manifest_type(char t) {
  switch (t) {
    case 'f': return "file";
    case 'd': return "dir";
    case 'l': return "symlink";
  }
  return "other";
}

json manifest_json(const manifest_entry& e, const std::string& mount_at) {
  json j{{"type", manifest_type(e.type)}, {"mode", e.mode}, {"size", e.size}, {"mtime", e.mtime_ns / 1e9}};
  put_bytes(j, "path", jail_path(e.path, mount_at));
  if (!e.sha256.empty()) j["sha256"] = e.sha256;
  if (e.type == 'l') put_bytes(j, "symlink_target", e.link_target);
  return j;
}

} // namespace

std::string jail_path(const std::string& relative, const std::string& mount_at) {
  if (relative.empty() || relative == ".") return mount_at;
  return mount_at + "/" + relative;
}

expected<workspace_options> workspace_options_from_json(const json& params) {
  workspace_options o;
  for (auto& [key, v] : params.items()) {
    status read = ok();
    if (key == "name") read = read_into(string_param(v, key), o.name);
    else if (key == "idle_timeout") read = read_into(seconds_param(v, key), o.idle_timeout);
    else if (key == "lifetime") read = read_into(seconds_param(v, key), o.lifetime);
    else if (key == "memory_limit") read = read_into(positive_param(v, key), o.memory_bytes);
    else if (key == "pids_limit") read = read_into(positive_param(v, key), o.pids);
    else if (key == "cpu_cores") read = read_into(positive_number_param(v, key), o.cpu_cores);
    else if (key == "keep_files") read = read_into(bool_param(v, key), o.keep_files);
    else if (key == "from_snapshot") read = read_into(string_param(v, key), o.from_snapshot);
    else if (key == "home") read = read_into(string_param(v, key), o.home);
    else return unknown(key, "workspace.create");
    if (!read) return read.error();
  }
  return o;
}

json workspace_options_to_json(const workspace_options& o) {
  json j = json::object();
  if (!o.name.empty()) j["name"] = o.name;
  if (o.idle_timeout) j["idle_timeout"] = o.idle_timeout->count() / 1000.0;
  if (o.lifetime) j["lifetime"] = o.lifetime->count() / 1000.0;
  if (o.memory_bytes) j["memory_limit"] = *o.memory_bytes;
  if (o.pids) j["pids_limit"] = *o.pids;
  if (o.cpu_cores) j["cpu_cores"] = *o.cpu_cores;
  if (o.keep_files) j["keep_files"] = true;
  if (!o.from_snapshot.empty()) j["from_snapshot"] = o.from_snapshot;
  if (!o.home.empty()) j["home"] = o.home;
  return j;
}

expected<std::string> workspace_ref_param(const json& params) {
  auto it = params.find("workspace");
  if (it == params.end()) return bad_param("workspace", "given: the workspace's id or name");
  return workspace_param(*it, "workspace");
}

expected<file_call> file_call_from_json(const std::string& op, const json& params) {
  auto what = op_named(op);
  if (!what) return make_failure(failure_kind::invalid_request, "no file operation \"" + op + "\"");
  file_call c;
  c.what = *what;
  auto method = "workspace.files." + op;
  bool has_data = false;
  for (auto& [key, v] : params.items()) {
    if (key == "workspace") continue;
    if (!op_takes(c.what, key)) return unknown(key, method);
    status read = ok();
    if (key == "path" || key == "from") read = read_into(string_param(v, key), c.path);
    else if (key == "to") read = read_into(string_param(v, key), c.to);
    else if (key == "data") {
      read = read_into(string_param(v, key), c.data);
      has_data = true;
    } else if (key == "data_base64") {
      auto s = string_param(v, key);
      if (!s) return s.error();
      auto bytes = base64_decode(*s);
      if (!bytes) return bad_param(key, "standard base64 with padding");
      c.data = std::move(*bytes);
      has_data = true;
    } else if (key == "mode") read = read_into(mode_param(v, key), c.mode);
    else if (key == "offset") read = read_into(offset_param(v, key), c.offset);
    else if (key == "length") read = read_into(positive_param(v, key, kMaxFilePiece), c.length);
    else if (key == "depth") {
      auto d = positive_param(v, key, 64);
      if (!d) return d.error();
      c.depth = static_cast<unsigned>(*d);
    } else if (key == "max_entries") read = read_into(positive_param(v, key, 100'000), c.max_entries);
    else if (key == "recursive") read = read_into(bool_param(v, key), c.recursive);
    else if (key == "parents") read = read_into(bool_param(v, key), c.parents);
    if (!read) return read.error();
  }
  if (params.contains("data") && params.contains("data_base64"))
    return make_failure(failure_kind::invalid_request, "give \"data\" or \"data_base64\", not both");
  using o = file_call::op;
  if ((c.what == o::write || c.what == o::append) && !has_data)
    return bad_param("data", "given (or \"data_base64\"): the bytes to " + op);
  if (c.what == o::move) {
    if (!params.contains("from")) return bad_param("from", "given: the path to move");
    if (!params.contains("to")) return bad_param("to", "given: where to move it");
  } else if (!params.contains("path")) {
    if (c.what != o::list) return bad_param("path", "given: a path in the workspace");
    c.path.assign(1, '.');  // list: the root unless told (assign: GCC 12 warns falsely on = ".")
  }
  if (c.what == o::mkdir && !params.contains("mode")) c.mode = 0755;
  return c;
}

json file_call_to_json(const std::string& ref, const file_call& c) {
  using o = file_call::op;
  json j{{"workspace", ref}};
  if (c.what == o::move) {
    j["from"] = c.path;
    j["to"] = c.to;
  } else {
    j["path"] = c.path;
  }
  switch (c.what) {
    case o::read:
      if (c.offset) j["offset"] = c.offset;
      if (c.length != kMaxFilePiece) j["length"] = c.length;
      break;
    case o::write:
    case o::append:
      if (is_valid_utf8(c.data)) j["data"] = c.data;
      else j["data_base64"] = base64_encode(c.data);
      if (c.what == o::write) {
        j["mode"] = c.mode;
        if (c.parents) j["parents"] = true;
      }
      break;
    case o::list:
      j["depth"] = c.depth;
      j["max_entries"] = c.max_entries;
      break;
    case o::mkdir:
      j["mode"] = c.mode;
      if (c.parents) j["parents"] = true;
      break;
    case o::remove:
      if (c.recursive) j["recursive"] = true;
      break;
    case o::stat:
    case o::move: break;
  }
  return j;
}

json to_json(const workspace_info& info) {
  const auto& r = info.record;
  json limits = json::object();
  if (r.memory_bytes) limits["memory_limit"] = *r.memory_bytes;
  if (r.pids) limits["pids_limit"] = *r.pids;
  if (r.cpu_cores) limits["cpu_cores"] = *r.cpu_cores;
  json j{{"workspace", r.id},
         {"name", r.name},
         {"mount_at", info.mount_at},
         {"created_at", r.created_at},
         {"ends_at", r.ends_at},
         {"idle_timeout", r.idle_timeout_ms / 1000.0},
         {"idle_left", info.idle_left_ms / 1000.0},
         {"last_used_at", info.last_used_at},
         {"phase", to_string(info.phase)},
         {"running", info.running},
         {"terminals", info.terminals},
         {"limits", limits},
         {"keep_files", r.keep_files},
         {"not_enforced", info.not_enforced}};
  if (r.ended) j["ended"] = true;
  j["paused"] = r.paused;
  if (!r.from_snapshot.empty()) j["from_snapshot"] = r.from_snapshot;
  if (!r.home.empty()) j["home"] = r.home;
  if (!r.lost.empty()) {
    json lost = json::array();
    for (auto& i : r.lost) lost.push_back(to_json(i));
    j["lost"] = std::move(lost);
    j["lost_at"] = r.lost_at;
  }
  return j;
}

json to_json(const terminal_listing& t) {
  return json{{"terminal", t.id}, {"argv", t.argv}, {"started_at", t.started_at}, {"viewers", t.viewers}, {"writer", t.writer}};
}

json to_json(const workspace_process& p) {
  return json{{"pid", p.pid}, {"ppid", p.ppid}, {"command", p.command}, {"state", std::string(1, p.state)},
              {"started_at", p.started_at}};
}

expected<int> signal_param(const json& value, const std::string& key) {
  static const std::pair<const char*, int> kNames[] = {
      {"HUP", SIGHUP}, {"INT", SIGINT}, {"QUIT", SIGQUIT}, {"KILL", SIGKILL}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
      {"TERM", SIGTERM}, {"CONT", SIGCONT}, {"STOP", SIGSTOP}, {"WINCH", SIGWINCH}};
  if (value.is_number_integer()) {
    auto n = value.get<long long>();
    if (n >= 1 && n <= 64) return static_cast<int>(n);
  } else if (value.is_string()) {
    auto name = value.get<std::string>();
    for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (name.rfind("SIG", 0) == 0) name = name.substr(3);
    for (auto& [known, number] : kNames)
      if (name == known) return number;
  }
  return make_failure(failure_kind::invalid_request,
                      "parameter \"" + key + "\" must be a signal: 1 to 64, or a name (TERM, KILL, INT, HUP, USR1, ...)");
}

json to_json(const snapshot_record& s) {
  json skipped = json::array();
  for (auto& path : s.skipped) {
    json one = json::object();
    put_bytes(one, "path", jail_path(path, kWorkspaceMountAt));
    skipped.push_back(std::move(one));
  }
  return json{{"snapshot", s.id},
              {"workspace", s.source},
              {"workspace_name", s.source_name},
              {"created_at", s.created_at},
              {"digest", s.digest},
              {"bytes", s.bytes},
              {"entries", s.entries},
              {"content_bytes", s.content_bytes},
              {"skipped", skipped}};
}

json to_json(const tree_entry& e, const std::string& mount_at) {
  json j{{"type", e.type}, {"size", e.size}, {"mode", e.mode}, {"mtime", e.mtime_ns / 1e9}};
  put_bytes(j, "path", jail_path(e.path, mount_at));
  put_bytes(j, "name", e.path == "." ? mount_at.substr(mount_at.rfind('/') + 1) : e.name);
  if (e.type == "symlink") put_bytes(j, "symlink_target", e.symlink_target);
  return j;
}

json to_json(const file_call& call, const file_reply& reply, const std::string& mount_at) {
  using o = file_call::op;
  switch (call.what) {
    case o::read: {
      json j{{"offset", call.offset}, {"size", reply.chunk.size}, {"eof", reply.chunk.eof},
             {"length", reply.chunk.data.size()}};
      // Bytes that are not UTF-8 travel whole as base64 only: a lossy copy beside them
      // would be read by a careless client as the file.
      if (is_valid_utf8(reply.chunk.data)) j["data"] = reply.chunk.data;
      else j["data_base64"] = base64_encode(reply.chunk.data);
      return j;
    }
    case o::list: {
      json entries = json::array();
      for (auto& e : reply.listing.entries) entries.push_back(to_json(e, mount_at));
      return json{{"entries", std::move(entries)}, {"truncated", reply.listing.truncated}};
    }
    case o::remove: return json{{"removed", true}};
    case o::write:
    case o::append:
    case o::stat:
    case o::mkdir:
    case o::move: return to_json(reply.entry, mount_at);
  }
  return json::object();
}

json to_json(const tree_change& c, const std::string& mount_at) {
  auto j = manifest_json(c.entry, mount_at);
  j["change"] = to_string(c.what);
  if (c.before) j["before"] = manifest_json(*c.before, mount_at);
  return j;
}

json to_json(const changes_reply& reply, const std::string& mount_at) {
  json changes = json::array();
  for (auto& c : reply.changes) changes.push_back(to_json(c, mount_at));
  return json{{"since", reply.mark}, {"changes", std::move(changes)}, {"truncated", reply.truncated},
              {"scanned", reply.scanned}};
}

} // namespace corral
