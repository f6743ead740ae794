// runtime::exec with output callbacks (actors/exec_streaming.hpp): a scoped actor on the
// calling thread subscribes to the execution's live output, calls the callbacks, and
// acknowledges each piece only after its callback returned (that is the flow control).
#include "actors/exec_streaming.hpp"

#include <exception>
#include <mutex>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/execution.hpp"
#include "actors/execution_messages.hpp"
#include "actors/output_collector.hpp"
#include "actors/runtime.hpp"

namespace corral {

namespace {

// From exec_control::cancel (any thread) to the receiver on the calling thread.
using cancel_request_atom = caf::atom_constant<caf::atom("cancelreq")>;

// At most two cancels reach the execution: the second already skips the grace.
constexpr unsigned kMaxCancels = 2;

} // namespace

struct exec_control::state {
  std::mutex m;
  caf::actor receiver;   // while an execution runs with this control
  unsigned pending = 0;  // cancels asked for before it started
};

exec_control::exec_control() : state_(std::make_shared<state>()) {}
exec_control::~exec_control() = default;

void exec_control::cancel() {
  std::lock_guard<std::mutex> lock(state_->m);
  if (state_->receiver) caf::anon_send(state_->receiver, cancel_request_atom::value);
  else ++state_->pending;
}

expected<exec_result> runtime::exec(const exec_request& request, const output_callbacks& output, exec_control* control) {
  caf::scoped_actor self{system()};
  auto me = caf::actor_cast<caf::actor>(self);
  unsigned asked = 0, sent = 0;
  if (control) {
    std::lock_guard<std::mutex> lock(control->shared()->m);
    control->shared()->receiver = me;
    asked = control->shared()->pending;
    control->shared()->pending = 0;
  }
  exec_request r = request;
  r.live_output = std::make_shared<const caf::actor>(me);  // also what hands us the execution to cancel
  exec_async(r, [me](expected<exec_result> done) {
    exec_outcome o;
    o.ok = done.has_value();
    if (o.ok) o.result = std::move(*done);
    else o.error = done.error();
    caf::anon_send(me, std::move(o));
  });
  caf::actor execution;
  auto send_cancels = [&] {
    for (; execution && sent < std::min(asked, kMaxCancels); ++sent) self->send(execution, cancel_atom::value);
  };
  // A callback that throws ends the execution (killed, not left running behind the
  // caller); the exception reaches the caller once the result is in.
  std::exception_ptr thrown;
  auto call = [&](auto& callback, auto&&... args) {
    if (!callback || thrown) return;
    try {
      callback(std::forward<decltype(args)>(args)...);
    } catch (...) {
      thrown = std::current_exception();
      asked = kMaxCancels;
      send_cancels();
    }
  };
  std::optional<exec_outcome> outcome;
  while (!outcome) {
    self->receive(
        [&](execution_started& started) {
          execution = started.execution;
          call(output.on_started, started.execution_id);
          send_cancels();
        },
        [&](execution_queued& queued) { call(output.on_queued, queued.position); },
        [&](output_chunk& chunk) {
          call(chunk.stream == stream_kind::err ? output.on_stderr : output.on_stdout, std::string_view(chunk.bytes));
          self->send(caf::actor_cast<caf::actor>(self->current_sender()), ack_atom::value,
                     static_cast<std::uint64_t>(chunk.bytes.size()));
        },
        [&](cancel_request_atom) {
          ++asked;
          send_cancels();
        },
        [&](exec_outcome& o) { outcome = std::move(o); });
  }
  if (control) {
    std::lock_guard<std::mutex> lock(control->shared()->m);
    control->shared()->receiver = nullptr;
  }
  if (thrown) std::rethrow_exception(thrown);
  if (!outcome->ok) return outcome->error;
  return std::move(outcome->result);
}

} // namespace corral
