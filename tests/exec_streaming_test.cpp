// The embedders' streaming facade (actors/exec_streaming.hpp): output through plain
// callbacks while the program still runs, cancel from another thread, flow control, and a
// callback that throws. No CAF code here, as in an embedder.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <catch2/catch.hpp>

#include "actors/runtime.hpp"
#include "tests/runtime_fixture.hpp"

using namespace corral;
using namespace corral::testing;

TEST_CASE("streamed output reaches the callbacks while the program still runs", "[streaming]") {
  test_runtime t;
  temp_dir dir{"corral-stream-"};
  std::string go = dir / "go";
  // The program prints, then waits for a file only the stdout callback creates: it can
  // end only if its first line was delivered before it ended.
  auto r = shell("echo first; echo oops >&2; i=0; while [ ! -e " + go +
                 " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; echo second");
  std::string out, err, started_id;
  output_callbacks cb;
  cb.on_started = [&](const std::string& id) { started_id = id; };
  cb.on_stdout = [&](std::string_view bytes) {
    out += bytes;
    if (out == "first\n") std::ofstream(go) << "x";
  };
  cb.on_stderr = [&](std::string_view bytes) { err += bytes; };
  auto started = std::chrono::steady_clock::now();
  auto result = t.rt->exec(r, cb);
  REQUIRE(result);
  CHECK(out == "first\nsecond\n");
  CHECK(err == "oops\n");
  CHECK(result->out.data == out);  // the result keeps what was streamed
  CHECK(started_id == result->execution_id);
  CHECK(result->how == verdict::exited);
  // Not the 10 s the program waits without the file.
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(8));
  CHECK(tracked_after_settling(*t.rt) == 0);
}

TEST_CASE("a large output arrives whole and in order through a slow callback", "[streaming]") {
  auto prof = test_runtime::host_profile();
  prof.limit.output_cap = 8u << 20;  // all of it is kept, so all of it is streamed
  test_runtime t(prof);
  // 4 MiB, more than the 1 MiB window: the program waits on the callbacks' acks.
  auto r = shell("head -c 4194304 /dev/zero | tr '\\0' 'a'; echo end");
  std::size_t seen = 0, calls = 0;
  bool in_order = true;
  output_callbacks cb;
  cb.on_stdout = [&](std::string_view bytes) {
    ++calls;
    for (char c : bytes) {
      if (seen < 4194304 ? c != 'a' : c != "end\n"[seen - 4194304]) in_order = false;
      ++seen;
    }
    if (calls % 16 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  auto result = t.rt->exec(r, cb);
  if (!result) FAIL(result.error().describe());
  CHECK(result->how == verdict::exited);
  CHECK(seen == 4194304 + 4);
  CHECK(in_order);
  CHECK(calls > 1);
}

TEST_CASE("exec_control cancels from another thread, before or during the execution", "[streaming]") {
  test_runtime t;
  SECTION("during: the program ends with the grace, the result says cancelled") {
    exec_control control;
    std::atomic<bool> running{false};
    output_callbacks cb;
    cb.on_stdout = [&](std::string_view) { running = true; };
    std::thread canceller([&] {
      for (int i = 0; i < 1000 && !running; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      control.cancel();
    });
    auto started = std::chrono::steady_clock::now();
    auto result = t.rt->exec(shell("echo up; sleep 30"), cb, &control);
    canceller.join();
    REQUIRE(result);
    CHECK(running);
    CHECK(result->how == verdict::cancelled);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
  }
  SECTION("before: it applies as soon as the execution starts") {
    exec_control control;
    control.cancel();
    output_callbacks cb;
    std::string out;
    cb.on_stdout = [&](std::string_view bytes) { out += bytes; };
    auto started = std::chrono::steady_clock::now();
    auto result = t.rt->exec(shell("sleep 30; echo never"), cb, &control);
    REQUIRE(result);
    CHECK(result->how == verdict::cancelled);
    CHECK(out.empty());
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
  }
  CHECK(tracked_after_settling(*t.rt) == 0);
}

TEST_CASE("a callback that throws ends the execution and the caller gets the exception", "[streaming]") {
  test_runtime t;
  output_callbacks cb;
  cb.on_stdout = [](std::string_view) { throw std::runtime_error("the host gave up"); };
  auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(t.rt->exec(shell("echo one; sleep 30"), cb), "the host gave up");
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
  // Nothing of it is left running.
  CHECK(tracked_after_settling(*t.rt) == 0);
}
