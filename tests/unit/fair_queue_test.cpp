// The supervisor's wait line alone: round robin across clients, order within one, and the
// position each push reports.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "actors/fair_queue.hpp"

using namespace corral;

TEST_CASE("a client's backlog delays another client's first item by one turn at most", "[fair_queue]") {
  fair_queue<std::string> q;
  for (int i = 0; i < 32; ++i) CHECK(q.push(1, "a" + std::to_string(i)) == static_cast<std::size_t>(i + 1));
  // B arrives behind 32 of A's: it is second in line, not 33rd.
  CHECK(q.push(2, "b0") == 2);
  CHECK(q.queued(1) == 32);
  CHECK(q.queued(2) == 1);
  CHECK(q.pop() == "a0");
  CHECK(q.pop() == "b0");
  CHECK(q.pop() == "a1");
  CHECK(q.size() == 30);
}

TEST_CASE("clients take turns in arrival order and each keeps its own order", "[fair_queue]") {
  fair_queue<std::string> q;
  q.push(1, "a0");
  q.push(1, "a1");
  q.push(2, "b0");
  CHECK(q.push(3, "c0") == 3);
  CHECK(q.push(2, "b1") == 5);  // after a0 b0 c0 a1
  std::vector<std::string> order;
  while (!q.empty()) order.push_back(q.pop());
  CHECK(order == std::vector<std::string>{"a0", "b0", "c0", "a1", "b1"});
  CHECK(q.queued(1) == 0);
}

TEST_CASE("draining the queue hands over every item and empties it", "[fair_queue]") {
  fair_queue<int> q;
  q.push(1, 1);
  q.push(2, 2);
  q.push(1, 3);
  int sum = 0, count = 0;
  q.drain([&](int& v) {
    sum += v;
    ++count;
  });
  CHECK(sum == 6);
  CHECK(count == 3);
  CHECK(q.empty());
  CHECK(q.push(5, 9) == 1);
}
