#include "proto/daemon/client_replies.hpp"

#include "proto/daemon/socket_loop.hpp"
#include "proto/jsonrpc/jsonrpc.hpp"

namespace corral {

void write_line(connection_self self, std::string line) {
  self->state.info->loop->write(self->state.id, std::move(line));
}

void reply_error(connection_self self, int code, std::string message, const nlohmann::json& id, nlohmann::json data) {
  write_line(self, rpc::error_line(rpc::error{code, std::move(message), id, std::move(data)}));
}

void reply_failure(connection_self self, const failure& f, const nlohmann::json& id) {
  write_line(self, rpc::error_line(rpc::error_from(f, id)));
}

void call_answered(connection_self self) {
  --self->state.calls_pending;
  self->state.last_activity = std::chrono::steady_clock::now();
  hang_up_when_answered(self);
}

void notify(connection_self self, const std::string& method, const nlohmann::json& params) {
  write_line(self, rpc::notification_line(method, params));
}

bool only_params(connection_self self, const rpc::request& r, std::initializer_list<const char*> allowed) {
  for (auto& [key, v] : r.params.items()) {
    bool fine = false;
    for (auto* a : allowed) fine = fine || key == a;
    if (!fine) {
      reply_error(self, rpc::kInvalidParams, "unknown parameter \"" + key + "\" for " + r.method, r.id);
      return false;
    }
  }
  return true;
}

bool has_work_in_flight(const client_connection_state& st) {
  return st.jobs_running > 0 || st.calls_pending > 0 || st.opening > 0 || !st.sessions.empty();
}

void hang_up_when_answered(connection_self self) {
  auto& st = self->state;
  if (st.phase != connection_phase::input_ended && st.phase != connection_phase::stopping) return;
  if (has_work_in_flight(st)) return;
  st.info->loop->close(st.id, st.phase == connection_phase::stopping ? "the daemon is stopping" : "the client hung up");
}

} // namespace corral
