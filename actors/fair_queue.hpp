// The supervisor's wait line when every slot is taken: one queue per client, served round
// robin, so a client with a long backlog delays another client's first execution by at
// most one turn, not by its whole backlog. Within a client, first come first served.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>

namespace corral {

template <class T>
class fair_queue {
public:
  // Queues `item` and returns its position: 1 starts next, assuming nothing else arrives.
  std::size_t push(std::uint64_t client, T item) {
    auto& mine = by_client_[client];
    mine.push_back(std::move(item));
    ++size_;
    std::size_t k = mine.size();  // its place within its own client's queue
    bool waiting_turn = std::find(turns_.begin(), turns_.end(), client) != turns_.end();
    if (!waiting_turn) turns_.push_back(client);
    // Round robin: each client ahead of ours in the turn order gets k turns before it,
    // each client behind ours k - 1.
    std::size_t ahead = k - 1;
    bool before = true;
    for (auto c : turns_) {
      if (c == client) {
        before = false;
        continue;
      }
      auto q = by_client_[c].size();
      ahead += std::min(q, before ? k : k - 1);
    }
    return ahead + 1;
  }

  // The next item in round-robin order. Not empty().
  T pop() {
    auto client = turns_.front();
    turns_.pop_front();
    auto& mine = by_client_[client];
    T item = std::move(mine.front());
    mine.pop_front();
    --size_;
    if (mine.empty()) by_client_.erase(client);
    else turns_.push_back(client);
    return item;
  }

  // Hands every queued item to `f` and empties the queue (the runtime is stopping).
  template <class F>
  void drain(F f) {
    for (auto& [client, items] : by_client_)
      for (auto& item : items) f(item);
    by_client_.clear();
    turns_.clear();
    size_ = 0;
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  std::size_t queued(std::uint64_t client) const {
    auto it = by_client_.find(client);
    return it == by_client_.end() ? 0 : it->second.size();
  }

private:
  std::map<std::uint64_t, std::deque<T>> by_client_;
  std::deque<std::uint64_t> turns_;  // clients with something queued, next first
  std::size_t size_ = 0;
};

} // namespace corral
