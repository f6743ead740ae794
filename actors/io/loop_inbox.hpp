// What other threads hand a libuv loop's thread: commands queued under a mutex, then the
// loop's async handle woken; the loop takes the whole batch at once. close() before the
// handle is closed: a post after it is dropped, so nothing wakes a closed handle (the
// socket loop's and the HTTP loop's write/close/stop from actors).
#pragma once

#include <deque>
#include <mutex>

#include <uv.h>

namespace corral {

template <class Command>
class loop_inbox {
public:
  explicit loop_inbox(uv_async_t* wake) : wake_(wake) {}

  void post(Command c) {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    queue_.push_back(std::move(c));
    uv_async_send(wake_);
  }

  // On the loop thread, from the async handle's callback.
  std::deque<Command> take() {
    std::deque<Command> batch;
    std::lock_guard<std::mutex> lock(mu_);
    batch.swap(queue_);
    return batch;
  }

  // On the loop thread, before the async handle is closed.
  void close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }

private:
  uv_async_t* wake_;
  std::mutex mu_;
  std::deque<Command> queue_;
  bool closed_ = false;
};

} // namespace corral
