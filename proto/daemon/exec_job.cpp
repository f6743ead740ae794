#include "proto/daemon/exec_job.hpp"

#include <memory>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/egress/egress_messages.hpp"
#include "actors/execution.hpp"
#include "actors/execution_messages.hpp"
#include "actors/output_collector.hpp"
#include "config/utf8.hpp"
#include "proto/daemon/daemon_messages.hpp"
#include "proto/jsonrpc/jsonrpc.hpp"
#include "proto/jsonrpc/result_json.hpp"

namespace corral {

std::string utf8_carry::take(const std::string& bytes) {
  std::string all = std::move(held_) + bytes;
  auto tail = incomplete_utf8_tail(all);
  held_ = all.substr(all.size() - tail);
  all.resize(all.size() - tail);
  return all;
}

std::string utf8_carry::flush() { return std::exchange(held_, std::string()); }

nlohmann::json output_notification(const nlohmann::json& id, const std::string& stream, const std::string& bytes) {
  nlohmann::json p{{"id", id}, {"stream", stream}};
  put_bytes(p, "data", bytes);
  return p;
}

caf::behavior exec_job(caf::event_based_actor* self, caf::actor connection, caf::actor supervisor,
                       exec_params params, nlohmann::json id, std::string key) {
  struct job_state {
    caf::actor execution;
    bool cancel_requested = false;
    bool orphaned = false;  // the connection is gone: cancel, then quit
    utf8_carry out, err;
  };
  auto st = std::make_shared<job_state>();
  // The client went (the connection actor exited): cancel the execution ourselves rather
  // than rely on it noticing its caller's exit, and wait for a queued one to start so it
  // can be cancelled too.
  self->set_exit_handler([=](caf::exit_msg& msg) {
    if (msg.reason == caf::exit_reason::normal) return;
    st->cancel_requested = true;
    st->orphaned = true;
    if (st->execution) {
      self->send(st->execution, cancel_atom::value);
      self->quit(msg.reason);
    }
  });
  bool stream = params.stream;
  auto notification = [=](stream_kind kind, const std::string& bytes) {
    auto name = kind == stream_kind::out ? "stdout" : "stderr";
    return rpc::notification_line("exec.output", output_notification(id, name, bytes));
  };
  auto emit = [=](stream_kind kind, const std::string& bytes) {
    if (!bytes.empty()) self->send(connection, rpc_out_atom::value, notification(kind, bytes));
  };
  auto request = std::move(params.request);
  request.live_output = std::make_shared<const caf::actor>(caf::actor_cast<caf::actor>(self));
  self->request(supervisor, caf::infinite, exec_atom::value, std::move(request))
      .then(
          [=](exec_outcome& o) {
            emit(stream_kind::out, st->out.flush());
            emit(stream_kind::err, st->err.flush());
            auto line = o.ok ? rpc::response_line(id, to_json(o.result)) : rpc::error_line(rpc::error_from(o.error, id));
            self->send(connection, job_done_atom::value, key, std::move(line));
            self->quit();
          },
          [=](caf::error& e) {
            auto f = make_failure(failure_kind::internal, "supervisor: " + self->system().render(e));
            self->send(connection, job_done_atom::value, key, rpc::error_line(rpc::error_from(f, id)));
            self->quit();
          });
  return {
      [=](execution_queued& queued) {
        if (!st->orphaned)
          self->send(connection, rpc_out_atom::value,
                     rpc::notification_line("execution_queued", {{"id", id},
                                                                 {"position", queued.position},
                                                                 {"queued_for_client", queued.queued_for_client}}));
      },
      [=](execution_started& started) {
        st->execution = started.execution;
        if (!st->orphaned)
          self->send(connection, rpc_out_atom::value,
                     rpc::notification_line("exec.started", {{"id", id}, {"execution_id", started.execution_id}}));
        if (st->cancel_requested) self->send(st->execution, cancel_atom::value);
        if (st->orphaned) self->quit(caf::exit_reason::user_shutdown);
      },
      [=](output_chunk& chunk) {
        // The collector waits for this acknowledgement before reading more than its window:
        // the connection sends it once the line is queued to the socket, so a client that
        // reads slowly slows the child, and one that stops reading fills the socket's
        // bounded queue and is disconnected (which cancels this).
        auto collector = caf::actor_cast<caf::actor>(self->current_sender());
        std::uint64_t size = chunk.bytes.size();
        auto& carry = chunk.stream == stream_kind::out ? st->out : st->err;
        auto text = stream ? carry.take(chunk.bytes) : std::string();
        if (text.empty()) return self->send(collector, ack_atom::value, size);
        self->send(connection, rpc_out_atom::value, notification(chunk.stream, text), collector, size);
      },
      [=](network_event& event) {
        // The egress audit, as each connection ends (allowlist network mode).
        if (stream && !st->orphaned)
          self->send(connection, rpc_out_atom::value,
                     rpc::notification_line("exec.network", {{"id", id}, {"event", to_json(event)}}));
      },
      [=](job_cancel_atom) {
        st->cancel_requested = true;
        if (st->execution) self->send(st->execution, cancel_atom::value);
      },
  };
}

} // namespace corral
