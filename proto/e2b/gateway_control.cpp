// The E2B control plane: create, list, get, kill, set the timeout of, connect to and pause
// the sandboxes of one API key.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "actors/workspaces/workspace_messages.hpp"
#include "proto/e2b/gateway_state.hpp"

namespace corral {

namespace {

constexpr auto kRegistryBound = std::chrono::seconds(35);
constexpr auto kSnapshotBound = std::chrono::minutes(10);
constexpr std::int64_t kDefaultTimeoutS = 300;  // E2B's, when a create names none

http_response not_found(const std::string& id) { return control_error(404, "sandbox " + id + " not found"); }

// "s-…" or "s-…:default" (E2B's tag-qualified form) names a snapshot; "" otherwise.
std::string snapshot_of_template(const std::string& tpl) {
  auto id = tpl.substr(0, tpl.find(':'));
  return valid_snapshot_id(id) ? id : std::string();
}

json snapshot_info(const snapshot_record& s) { return {{"snapshotID", s.id}, {"names", json::array()}}; }

// Fields of a create corral cannot honour: refused by name rather than ignored.
std::optional<std::string> unsupported_create_field(const json& b, bool network_none) {
  auto set = [&](const char* k) { return b.contains(k) && !b[k].is_null(); };
  if (set("autoPause") && b["autoPause"].get<bool>())
    return "autoPause: corral ends a sandbox at its timeout; pausing on timeout is not supported";
  if (set("autoResume")) return "autoResume is not supported by corral";
  if (set("network") && !b["network"].empty())
    return "network rules per sandbox are not supported; the daemon's profile sets the network";
  if (set("mcp")) return "mcp servers in the sandbox are not supported by corral's E2B gateway";
  if (set("volumeMounts") && !b["volumeMounts"].empty()) return "volumeMounts are not supported by corral";
  if (set("allow_internet_access") && !b["allow_internet_access"].get<bool>() && !network_none)
    return "allow_internet_access=false cannot narrow this daemon's network per sandbox; run it with network = \"none\"";
  return std::nullopt;
}

expected<std::map<std::string, std::string>> string_map(const json& b, const char* key) {
  std::map<std::string, std::string> out;
  if (!b.contains(key) || b[key].is_null()) return out;
  if (!b[key].is_object()) return make_failure(failure_kind::invalid_request, std::string(key) + " must be an object");
  for (auto& [k, v] : b[key].items()) {
    if (!v.is_string()) return make_failure(failure_kind::invalid_request, std::string(key) + "." + k + " must be a string");
    out[k] = v.get<std::string>();
  }
  return out;
}

// The longest E2B timeout a sandbox may have: the workspace's lifetime, and its idle
// timeout (the registry ends a workspace nothing used for that long, and only narrows).
std::int64_t max_timeout_s(const e2b_gateway_config& c) {
  return std::min(c.settings.max_lifetime, c.settings.idle_timeout).count() / 1000;
}

expected<std::int64_t> timeout_of(const json& b, const e2b_gateway_config& c, std::int64_t fallback) {
  if (!b.contains("timeout") || b["timeout"].is_null()) return fallback;
  if (!b["timeout"].is_number_integer() || b["timeout"].get<std::int64_t>() < 1)
    return make_failure(failure_kind::invalid_request, "timeout must be a whole number of seconds, at least 1");
  auto t = b["timeout"].get<std::int64_t>();
  if (t > max_timeout_s(c))
    return make_failure(failure_kind::invalid_request,
                        "timeout of " + std::to_string(t) + " s is more than this daemon allows (" +
                            std::to_string(max_timeout_s(c)) +
                            " s: [sandbox.workspaces] max_lifetime and idle_timeout bound it)");
  return t;
}

caf::result<http_response> create(gateway_self self, const api_key_record& key, http_request& r) {
  auto& st = self->state;
  auto body = rpc_message(r, false);
  if (!body) return control_error(400, body.error().message);
  auto& b = *body;
  std::string tpl = b.value("templateID", std::string("base"));
  // A snapshot's id (as createSnapshot answered it) is a template too: its files.
  auto snapshot = snapshot_of_template(tpl);
  auto& templates = st.config.settings.templates;
  auto preset = templates.find(tpl);
  if (tpl != "base" && preset == templates.end() && snapshot.empty()) {
    std::string names = "'base'";
    for (auto& [name, t] : templates) names += ", '" + name + "'";
    return control_error(400, "template '" + tpl + "' is not served here: corral serves " + names +
                                  " ([sandbox.workspaces.templates]) and the ids of this key's snapshots");
  }
  if (auto why = unsupported_create_field(b, st.config.network_none)) return control_error(400, *why);
  auto timeout = timeout_of(b, st.config, std::min(kDefaultTimeoutS, max_timeout_s(st.config)));
  if (!timeout) return control_error(400, timeout.error().message);
  auto metadata = string_map(b, "metadata");
  if (!metadata) return control_error(400, metadata.error().message);
  auto envs = string_map(b, "envVars");
  if (!envs) return control_error(400, envs.error().message);

  sandbox_record rec;
  rec.key = key.id;
  rec.template_id = tpl;
  rec.metadata = std::move(*metadata);
  if (preset != templates.end()) rec.env_vars = preset->second.env;
  for (auto& [k, v] : *envs) rec.env_vars[k] = v;
  rec.access_token = random_secret("");
  workspace_options o;
  o.home = kSandboxHome;
  o.from_snapshot = snapshot;
  if (preset != templates.end()) {
    o.memory_bytes = preset->second.memory_bytes;
    o.cpu_cores = preset->second.cpu_cores;
    o.pids = preset->second.pids;
  }
  auto rp = self->make_response_promise<http_response>();
  // From a snapshot the reply comes once its files are unpacked and checked.
  auto bound = snapshot.empty() ? kRegistryBound : std::chrono::seconds(kSnapshotBound);
  self->request(st.config.workspaces, bound, ws_create_atom::value, o, key_principal(key))
      .then(
          [=](workspace_reply& w) mutable {
            if (!w.ok) return answer(rp, control_error(control_status(w.error.kind), w.error.message));
            rec.id = w.info.record.id;
            rec.started_at_ms = unix_ms_now();
            rec.end_at_ms = rec.started_at_ms + *timeout * 1000;
            if (auto written = write_sandbox_record(self->state.config.dir, rec); !written) {
              self->send(self->state.config.workspaces, ws_end_atom::value, rec.id, key_principal(key), false);
              return answer(rp, control_error(500, written.error().message));
            }
            sandbox_entry e;
            e.record = rec;
            self->state.sandboxes.emplace(rec.id, std::move(e));
            spdlog::info("e2b: sandbox {} created for key {} ({} s)", rec.id, key.id, *timeout);
            rp.deliver(json_response(201, sandbox_json(rec, w.info, true)));
          },
          registry_error(self, rp));
  return rp;
}

// The state and metadata filters of a list: ?state=running,paused&metadata=k%3Dv%26k2%3Dv2
bool listed(const http_request& r, const sandbox_record& rec, const workspace_info& w) {
  if (auto states = r.query_param("state")) {
    std::string state = w.phase == workspace_phase::paused ? "paused" : "running";
    if (("," + *states + ",").find("," + state + ",") == std::string::npos) return false;
  }
  if (auto meta = r.query_param("metadata")) {
    std::string pairs = *meta;
    std::size_t start = 0;
    while (start <= pairs.size()) {
      auto amp = pairs.find('&', start);
      auto pair = pairs.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
      auto eq = pair.find('=');
      if (!pair.empty()) {
        auto k = percent_decode(pair.substr(0, eq)).value_or("");
        auto v = eq == std::string::npos ? std::string() : percent_decode(pair.substr(eq + 1)).value_or("");
        auto it = rec.metadata.find(k);
        if (it == rec.metadata.end() || it->second != v) return false;
      }
      if (amp == std::string::npos) break;
      start = amp + 1;
    }
  }
  return true;
}

caf::result<http_response> list(gateway_self self, const api_key_record& key, http_request& r) {
  auto rp = self->make_response_promise<http_response>();
  std::size_t limit = 100;
  if (auto l = r.query_param("limit")) {
    try {
      limit = std::clamp<std::size_t>(std::stoul(*l), 1, 1000);
    } catch (const std::exception&) {
      return control_error(400, "limit must be a number");
    }
  }
  std::string after = r.query_param("nextToken").value_or("");
  self->request(self->state.config.workspaces, kRegistryBound, ws_list_atom::value, key_principal(key))
      .then(
          [=](workspace_list& l) mutable {
            std::vector<std::pair<sandbox_record, workspace_info>> mine;
            for (auto& w : l.items) {
              auto it = self->state.sandboxes.find(w.record.id);
              if (it == self->state.sandboxes.end() || it->second.ending) continue;
              if (listed(r, it->second.record, w)) mine.emplace_back(it->second.record, w);
            }
            std::sort(mine.begin(), mine.end(), [](auto& a, auto& b) {
              return std::tie(a.first.started_at_ms, a.first.id) < std::tie(b.first.started_at_ms, b.first.id);
            });
            json out = json::array();
            std::string next;
            bool started = after.empty();
            for (auto& [rec, w] : mine) {
              if (!started) {
                started = rec.id == after;
                continue;
              }
              if (out.size() == limit) {
                next = out.back()["sandboxID"].get<std::string>();
                break;
              }
              out.push_back(sandbox_json(rec, w, false));
            }
            auto resp = json_response(200, out);
            if (!next.empty()) resp.headers.emplace_back("x-next-token", next);
            rp.deliver(std::move(resp));
          },
          registry_error(self, rp));
  return rp;
}

// Answers `then` with the sandbox's workspace, or 404 when it is not this key's.
template <class Then>
caf::result<http_response> with_workspace(gateway_self self, const api_key_record& key, const std::string& id,
                                          Then then) {
  auto& st = self->state;
  auto it = st.sandboxes.find(id);
  if (it == st.sandboxes.end() || it->second.record.key != key.id || it->second.ending) return not_found(id);
  auto rp = self->make_response_promise<http_response>();
  self->request(st.config.workspaces, kRegistryBound, ws_get_atom::value, id, key_principal(key))
      .then(
          [=](workspace_reply& w) mutable {
            auto at = self->state.sandboxes.find(id);
            if (!w.ok || at == self->state.sandboxes.end()) return answer(rp, not_found(id));
            then(at->second, w.info, rp);
          },
          registry_error(self, rp));
  return rp;
}

using promise = caf::response_promise;

caf::result<http_response> set_timeout(gateway_self self, const api_key_record& key, const std::string& id,
                                       http_request& r, bool connecting) {
  auto body = rpc_message(r, false);
  if (!body) return control_error(400, body.error().message);
  auto& cfg = self->state.config;
  if (!connecting && !body->contains("timeout")) return control_error(400, "timeout (seconds) is required");
  auto timeout = timeout_of(*body, cfg, 0);
  if (!timeout) return control_error(400, timeout.error().message);
  return with_workspace(self, key, id, [=](sandbox_entry& sb, workspace_info& w, promise& rp) {
    auto now = unix_ms_now();
    if (*timeout > 0) {
      auto end = now + *timeout * 1000;
      // A connect only extends; a set-timeout sets, shorter or longer.
      if (!connecting || end > sb.record.end_at_ms) sb.record.end_at_ms = end;
      if (sb.record.end_at_ms / 1000 > w.record.ends_at)
        return answer(rp, control_error(400, "the sandbox's workspace ends at " + rfc3339_ms(w.record.ends_at * 1000) +
                                                       " ([sandbox.workspaces] max_lifetime); its timeout cannot pass that"));
      if (auto s = write_sandbox_record(self->state.config.dir, sb.record); !s)
        return answer(rp, control_error(500, s.error().message));
    }
    if (!connecting) return answer(rp, no_content());
    if (w.phase != workspace_phase::paused) return answer(rp, json_response(200, sandbox_json(sb.record, w, true)));
    auto rec = sb.record;
    self->request(self->state.config.workspaces, kRegistryBound, ws_resume_atom::value, id, key_principal(key))
        .then(
            [=](workspace_reply& resumed) mutable {
              if (!resumed.ok) return answer(rp, control_error(control_status(resumed.error.kind), resumed.error.message));
              rp.deliver(json_response(201, sandbox_json(rec, resumed.info, true)));
            },
            registry_error(self, rp));
  });
}

caf::result<http_response> pause(gateway_self self, const api_key_record& key, const std::string& id) {
  return with_workspace(self, key, id, [=](sandbox_entry&, workspace_info&, promise& rp) {
    self->request(self->state.config.workspaces, kRegistryBound, ws_pause_atom::value, id, key_principal(key))
        .then(
            [=](workspace_reply& p) mutable {
              // Not 409: the SDK reads that as "already paused".
              rp.deliver(p.ok ? no_content() : control_error(400, "pause: " + p.error.message));
            },
            registry_error(self, rp));
  });
}

// A snapshot of the sandbox's files (the workspace's: its processes are frozen while it is
// taken, and not kept), to create sandboxes from by its id.
caf::result<http_response> snapshot(gateway_self self, const api_key_record& key, const std::string& id,
                                    http_request& r) {
  auto body = rpc_message(r, false);
  if (!body) return control_error(400, body.error().message);
  if (body->contains("name") && !(*body)["name"].is_null())
    return control_error(400, "named snapshots are not supported by corral: create sandboxes from the snapshotID");
  return with_workspace(self, key, id, [=](sandbox_entry&, workspace_info&, promise& rp) {
    self->request(self->state.config.workspaces, kSnapshotBound, ws_snap_atom::value, id, key_principal(key))
        .then(
            [=](snapshot_reply& s) mutable {
              if (!s.ok) return answer(rp, control_error(control_status(s.error.kind), s.error.message));
              answer(rp, json_response(201, snapshot_info(s.record)));
            },
            registry_error(self, rp));
  });
}

caf::result<http_response> list_snapshots(gateway_self self, const api_key_record& key, http_request& r) {
  auto rp = self->make_response_promise<http_response>();
  auto from = r.query_param("sandboxID").value_or("");
  self->request(self->state.config.workspaces, kRegistryBound, ws_snaps_atom::value, key_principal(key))
      .then(
          [=](snapshot_list& l) mutable {
            json out = json::array();
            for (auto& s : l.items)
              if (from.empty() || s.source == from) out.push_back(snapshot_info(s));
            answer(rp, json_response(200, out));
          },
          registry_error(self, rp));
  return rp;
}

caf::result<http_response> remove_snapshot(gateway_self self, const api_key_record& key, const std::string& tpl) {
  auto id = snapshot_of_template(tpl);
  if (id.empty()) return control_error(404, "template " + tpl + " not found (only snapshots can be deleted here)");
  auto rp = self->make_response_promise<http_response>();
  self->request(self->state.config.workspaces, kRegistryBound, ws_snaprm_atom::value, id, key_principal(key))
      .then(
          [=](snapshot_reply& s) mutable {
            answer(rp, s.ok ? no_content() : control_error(control_status(s.error.kind), s.error.message));
          },
          registry_error(self, rp));
  return rp;
}

caf::result<http_response> kill(gateway_self self, const api_key_record& key, const std::string& id) {
  auto it = self->state.sandboxes.find(id);
  if (it == self->state.sandboxes.end() || it->second.record.key != key.id) return not_found(id);
  auto rp = self->make_response_promise<http_response>();
  end_sandbox(self, id, "killed by its key", [rp](bool gone) mutable {
    rp.deliver(gone ? no_content() : control_error(500, "the sandbox could not be ended; see the daemon's log"));
  });
  return rp;
}

} // namespace

caf::result<http_response> control_call(gateway_self self, const api_key_record& key, http_request& r) {
  std::string path = r.path.compare(0, 3, "/v2") == 0 ? r.path.substr(3) : r.path;
  std::vector<std::string> parts;
  for (std::size_t start = 1; start <= path.size();) {
    auto slash = path.find('/', start);
    parts.push_back(path.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  auto& m = r.method;
  if (!parts.empty() && parts[0] == "snapshots" && parts.size() == 1 && m == "GET") return list_snapshots(self, key, r);
  if (!parts.empty() && parts[0] == "templates" && parts.size() == 2 && m == "DELETE")
    return remove_snapshot(self, key, parts[1]);
  if (parts.empty() || parts[0] != "sandboxes")
    return control_error(501, "corral's E2B gateway does not support " + m + " " + r.path);
  if (parts.size() == 1 && m == "POST") return create(self, key, r);
  if (parts.size() == 1 && m == "GET") return list(self, key, r);
  if (parts.size() >= 2) {
    auto& id = parts[1];
    if (parts.size() == 2 && m == "GET")
      return with_workspace(self, key, id, [](sandbox_entry& sb, workspace_info& w, promise& rp) {
        rp.deliver(json_response(200, sandbox_json(sb.record, w, true)));
      });
    if (parts.size() == 2 && m == "DELETE") return kill(self, key, id);
    if (parts.size() == 3 && m == "POST") {
      if (parts[2] == "timeout") return set_timeout(self, key, id, r, false);
      if (parts[2] == "connect" || parts[2] == "resume") return set_timeout(self, key, id, r, true);
      if (parts[2] == "pause") return pause(self, key, id);
      if (parts[2] == "snapshots") return snapshot(self, key, id, r);
    }
  }
  return control_error(501, "corral's E2B gateway does not support " + m + " " + r.path +
                                " (served: create, list, get, kill, timeout, connect, resume, pause, snapshots)");
}

} // namespace corral
