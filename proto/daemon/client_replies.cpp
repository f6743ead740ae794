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

void notify(connection_self self, const std::string& method, const nlohmann::json& params) {
  write_line(self, rpc::notification_line(method, params));
}

void hang_up_when_answered(connection_self self) {
  auto& st = self->state;
  if (st.phase != connection_phase::input_ended && st.phase != connection_phase::stopping) return;
  if (st.jobs_running > 0 || st.calls_pending > 0 || st.opening > 0 || !st.sessions.empty()) return;
  st.info->loop->close(st.id, st.phase == connection_phase::stopping ? "the daemon is stopping" : "the client hung up");
}

} // namespace corral
