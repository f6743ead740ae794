// envd's filesystem service (Stat, ListDir, MakeDir, Move, Remove) and its /files upload
// and download, on the sandbox's workspace files through the registry's files API: every
// path resolved beneath the workspace's root, never through a link out of it.
#include <memory>

#include "actors/workspaces/workspace_files.hpp"
#include "proto/e2b/dir_watch.hpp"
#include "proto/e2b/gateway_state.hpp"
#include "proto/http/multipart.hpp"

namespace corral {

namespace {

constexpr auto kFileBound = std::chrono::seconds(120);
// A download is answered whole: files larger than this are refused, not truncated.
constexpr std::uint64_t kMaxDownload = 256ull << 20;
constexpr std::size_t kMaxWatchesPerSandbox = 16;

using promise = caf::response_promise;
using reply_fn = std::function<void(file_reply&)>;

void file_op(gateway_self self, const sandbox_record& sb, file_call call, reply_fn then) {
  self->request(self->state.config.workspaces, kFileBound, ws_files_atom::value, sb.id, principal_of(sb),
                std::move(call))
      .then([then](file_reply& f) { then(f); },
            [then, self](caf::error& e) {
              file_reply f;
              f.error = make_failure(failure_kind::internal, "the workspace's files: " + self->system().render(e));
              then(f);
            });
}

std::optional<std::string> relative_or_error(const std::string& path, std::string& error) {
  auto rel = workspace_relative(path);
  if (!rel)
    error = "path " + path + " is outside the sandbox's files: corral's file API reaches " + kSandboxHome +
            " (also shown as /work) and nothing else";
  return rel;
}

http_response rpc_failure(const failure& f) { return connect_error(connect_code(f.kind), f.message); }

// /files errors are the control plane's shape: {"code": status, "message"}.
http_response files_failure(const failure& f) { return control_error(control_status(f.kind), f.message); }

std::string string_field(const json& m, const char* key) {
  return m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : std::string();
}

// A download: the file read in pieces, one request after another, then answered whole.
// Each reply's handler holds the job (shared), so it lives exactly while a piece is asked.
struct download_job : std::enable_shared_from_this<download_job> {
  gateway_self self;
  sandbox_record sandbox;
  std::string rel;
  caf::typed_response_promise<http_response> rp;
  std::string body;

  download_job(gateway_self s, sandbox_record sb, std::string r) : self(s), sandbox(std::move(sb)), rel(std::move(r)) {}

  void next() {
    file_call c;
    c.what = file_call::op::read;
    c.path = rel;
    c.offset = body.size();
    file_op(self, sandbox, c, [job = shared_from_this()](file_reply& f) { job->piece(f); });
  }

  void piece(file_reply& f) {
    if (!f.ok) return answer(rp, files_failure(f.error));
    if (f.chunk.size > kMaxDownload)
      return answer(rp, control_error(400, "the file is " + std::to_string(f.chunk.size) +
                                               " bytes; corral's /files answers at most " + std::to_string(kMaxDownload)));
    body += f.chunk.data;
    if (!f.chunk.eof && !f.chunk.data.empty()) return next();
    http_response resp;
    resp.headers.emplace_back("Content-Type", "application/octet-stream");
    resp.body = std::move(body);
    answer(rp, std::move(resp));
  }
};

struct upload {
  std::string rel;
  std::string_view data;  // into upload_job::body
};

// An upload: each file written in pieces (a write, then appends), one file after another,
// then the list of what was written answered.
struct upload_job : std::enable_shared_from_this<upload_job> {
  gateway_self self;
  sandbox_record sandbox;
  std::string body;  // the request's: the parts are views into it
  std::vector<upload> files;
  caf::typed_response_promise<http_response> rp;  // made once the request is checked
  std::size_t file = 0;
  std::size_t offset = 0;
  json written = json::array();

  upload_job(gateway_self s, sandbox_record sb) : self(s), sandbox(std::move(sb)) {}

  void next() {
    if (file == files.size()) return answer(rp, json_response(200, written));
    auto& f = files[file];
    file_call c;
    c.what = offset == 0 ? file_call::op::write : file_call::op::append;
    c.path = f.rel;
    c.parents = true;
    auto n = std::min<std::size_t>(kMaxFilePiece, f.data.size() - offset);
    c.data.assign(f.data.substr(offset, n));
    file_op(self, sandbox, std::move(c), [job = shared_from_this(), n](file_reply& r) { job->piece(r, n); });
  }

  void piece(file_reply& r, std::size_t n) {
    if (!r.ok) return answer(rp, files_failure(r.error));
    offset += n;
    if (offset >= files[file].data.size()) {
      written.push_back({{"name", r.entry.name}, {"type", "file"}, {"path", sandbox_path(r.entry.path)}});
      ++file;
      offset = 0;
    }
    next();
  }
};

caf::result<http_response> upload_call(gateway_self self, sandbox_entry& sb, http_request& r) {
  auto job = std::make_shared<upload_job>(self, sb.record);
  job->body = std::move(r.body);
  auto& files = job->files;
  auto& body = job->body;
  auto query_path = r.query_param("path");
  std::string error;
  auto* type = r.header("content-type");
  std::string content_type = type ? *type : "";
  if (content_type.rfind("multipart/form-data", 0) == 0) {
    auto parts = parse_multipart(content_type, body);
    if (!parts) return control_error(400, parts.error().message);
    for (auto& p : *parts) {
      if (p.name != "file") continue;
      std::string path = query_path && parts->size() == 1 ? *query_path : p.filename.value_or("");
      if (path.empty()) return control_error(400, "a file part needs a path (the ?path= query or its filename)");
      auto rel = relative_or_error(path, error);
      if (!rel) return control_error(400, error);
      files.push_back({*rel, p.data});
    }
    if (files.empty()) return control_error(400, "the upload has no part named 'file'");
  } else {
    if (!query_path) return control_error(400, "an octet-stream upload needs ?path=");
    if (r.header("content-encoding")) return control_error(400, "corral does not take compressed uploads (Content-Encoding)");
    auto rel = relative_or_error(*query_path, error);
    if (!rel) return control_error(400, error);
    files.push_back({*rel, body});
  }
  job->rp = self->make_response_promise<http_response>();
  job->next();
  return job->rp;
}

// WatchDir: a watch actor streams the changes; the gateway keeps it to end it with the
// sandbox, a few per sandbox.
caf::result<http_response> watch_call(gateway_self self, sandbox_entry& sb, http_request& r) {
  auto m = rpc_message(r, true);
  if (!m) return connect_error("invalid_argument", m.error().message);
  if (m->value("includeEntry", false))
    return connect_error("unimplemented", "corral's watch does not send entries with its events (includeEntry)");
  if (sb.watches.size() >= kMaxWatchesPerSandbox)
    return connect_error("resource_exhausted", "at most " + std::to_string(kMaxWatchesPerSandbox) +
                                                   " directory watches per sandbox at once");
  std::string error;
  auto rel = relative_or_error(string_field(*m, "path"), error);
  if (!rel) return connect_error("invalid_argument", error);
  dir_watch_spec spec;
  spec.root = workspace_layout(self->state.config.workspaces_dir + "/" + sb.record.id).root;
  spec.relative = *rel;
  spec.recursive = m->value("recursive", false);
  spec.timeout = call_timeout(r);
  auto watch = spawn_dir_watch(self->system(), spec, caf::actor_cast<caf::actor>(self->current_sender()));
  self->monitor(watch);
  sb.watches.push_back(watch);
  return subscribed();
}

} // namespace

caf::result<http_response> files_call(gateway_self self, sandbox_entry& sb, http_request& r) {
  if (r.method == "POST") return upload_call(self, sb, r);
  if (r.method != "GET") return control_error(405, "/files takes GET and POST");
  auto path = r.query_param("path");
  if (!path) return control_error(400, "a download needs ?path=");
  std::string error;
  auto rel = relative_or_error(*path, error);
  if (!rel) return control_error(400, error);
  auto job = std::make_shared<download_job>(self, sb.record, *rel);
  job->rp = self->make_response_promise<http_response>();
  job->next();
  return job->rp;
}

caf::result<http_response> filesystem_call(gateway_self self, sandbox_entry& sb, http_request& r, const std::string& method) {
  if (method == "WatchDir") return watch_call(self, sb, r);
  if (method == "CreateWatcher" || method == "GetWatcherEvents" || method == "RemoveWatcher")
    return connect_error("unimplemented", "corral's envd watches through the WatchDir stream only, not filesystem." +
                                              method + " (the JS SDK's watchDir uses the stream)");
  auto m = rpc_message(r, false);
  if (!m) return connect_error("invalid_argument", m.error().message);
  std::string error;
  auto rp = self->make_response_promise<http_response>();
  auto answer_entry = [rp](file_reply& f) mutable {
    rp.deliver(f.ok ? json_response(200, {{"entry", entry_json(f.entry)}}) : rpc_failure(f.error));
  };
  auto path_of = [&](const char* key) -> std::optional<std::string> {
    auto rel = relative_or_error(string_field(*m, key), error);
    if (!rel) rp.deliver(connect_error("invalid_argument", error));
    return rel;
  };
  file_call c;
  if (method == "Stat") {
    auto rel = path_of("path");
    if (!rel) return rp;
    c.what = file_call::op::stat;
    c.path = *rel;
    file_op(self, sb.record, c, answer_entry);
  } else if (method == "ListDir") {
    auto rel = path_of("path");
    if (!rel) return rp;
    c.what = file_call::op::list;
    c.path = *rel;
    c.depth = std::clamp<unsigned>(m->value("depth", 1u), 1u, max_list_depth);
    file_op(self, sb.record, c, [rp](file_reply& f) mutable {
      if (!f.ok) return answer(rp, rpc_failure(f.error));
      json entries = json::array();
      for (auto& e : f.listing.entries) entries.push_back(entry_json(e));
      rp.deliver(json_response(200, {{"entries", entries}}));
    });
  } else if (method == "MakeDir") {
    auto rel = path_of("path");
    if (!rel) return rp;
    c.what = file_call::op::stat;
    c.path = *rel;
    // An existing path answers already_exists (the SDK's makeDir then returns false).
    sandbox_record copy = sb.record;
    file_op(self, sb.record, c, [=](file_reply& f) mutable {
      if (f.ok) return answer(rp, connect_error("already_exists", "path " + sandbox_path(f.entry.path) + " exists already"));
      file_call mk;
      mk.what = file_call::op::mkdir;
      mk.path = *rel;
      mk.parents = true;
      mk.mode = 0755;
      file_op(self, copy, mk, answer_entry);
    });
  } else if (method == "Move") {
    auto from = path_of("source");
    if (!from) return rp;
    auto to = path_of("destination");
    if (!to) return rp;
    c.what = file_call::op::move;
    c.path = *from;
    c.to = *to;
    file_op(self, sb.record, c, answer_entry);
  } else if (method == "Remove") {
    auto rel = path_of("path");
    if (!rel) return rp;
    c.what = file_call::op::remove;
    c.path = *rel;
    c.recursive = true;
    file_op(self, sb.record, c, [rp](file_reply& f) mutable {
      rp.deliver(f.ok ? json_response(200, json::object()) : rpc_failure(f.error));
    });
  } else {
    rp.deliver(connect_error("unimplemented", "corral's envd does not serve filesystem." + method));
  }
  return rp;
}

} // namespace corral
