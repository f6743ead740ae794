// Streaming an execution's output in-process, for an agent host that embeds the runtime:
// plain callbacks, no CAF code and no internal header in the embedder.
//
//   corral::output_callbacks out;
//   out.on_stdout = [](std::string_view bytes) { std::cout << bytes; };
//   corral::exec_control control;                 // control.cancel() from any thread
//   auto result = rt->exec(request, out, &control);
//
// The callbacks run on the calling thread, one at a time and in order, as output arrives.
// Flow control is the runtime's: while a callback runs, nothing more is acknowledged, and
// a program that writes faster than the callbacks take its output waits (a 1 MiB window
// per stream) instead of filling memory. The bytes are also the result's (up to the
// output cap), so a callback may keep nothing.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace corral {

struct output_callbacks {
  std::function<void(std::string_view)> on_stdout;
  std::function<void(std::string_view)> on_stderr;
  // Once the execution has an id (after queueing, before the program runs).
  std::function<void(const std::string& execution_id)> on_started;
  // When the execution must wait for a free slot: 1 starts next.
  std::function<void(std::size_t position)> on_queued;
};

// Cancels the execution it is passed to, from any thread. The first cancel ends the program
// with the grace (SIGTERM to every process of it, SIGKILL after); a second kills at once.
// A cancel before the execution started applies as soon as it does. One execution at a
// time per control; its result says how it ended (verdict "cancelled").
class exec_control {
public:
  exec_control();
  ~exec_control();
  exec_control(const exec_control&) = delete;
  exec_control& operator=(const exec_control&) = delete;

  void cancel();

  struct state;  // shared with the execution's receiver (actors/exec_streaming.cpp)
  const std::shared_ptr<state>& shared() const { return state_; }

private:
  std::shared_ptr<state> state_;
};

} // namespace corral
