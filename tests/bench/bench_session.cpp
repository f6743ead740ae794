// corral_bench_session: what a stdio session costs. Round trip of a small JSON-RPC message
// through a session next to the same child on a plain pipe (both measured here), and the
// runtime's memory per idle session.
// Usage: corral_bench_session [--tier NAME] [--sessions N]  (env BENCH_SESSION_N=5000)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <spdlog/spdlog.h>

#include "actors/session_client.hpp"

extern char** environ;

namespace {

using clock_type = std::chrono::steady_clock;

// The child of both measurements: one JSON-RPC response line per request line.
const char* const kEcho = R"(import sys
out = sys.stdout.buffer
while True:
    line = sys.stdin.buffer.readline()
    if not line:
        break
    out.write(b'{"jsonrpc":"2.0","id":1,"result":"pong"}\n')
    out.flush()
)";
const std::string kRequest = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";

struct stats {
  double median_us = 0, p99_us = 0;
};

stats summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[std::min(us.size() - 1, static_cast<std::size_t>(q * us.size()))]; };
  return {at(0.5), at(0.99)};
}

long rss_kib() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

// The same python child on two plain pipes, no corral in between.
std::vector<double> plain_pipe(int n) {
  int in[2], out[2];
  if (::pipe(in) < 0 || ::pipe(out) < 0) std::exit(1);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, in[1]);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  std::string code = kEcho;
  char* argv[] = {const_cast<char*>("/usr/bin/python3"), const_cast<char*>("-u"), const_cast<char*>("-c"), code.data(), nullptr};
  pid_t pid = 0;
  if (::posix_spawn(&pid, "/usr/bin/python3", &fa, nullptr, argv, environ) != 0) std::exit(1);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  std::string line = kRequest + "\n";
  std::vector<double> us;
  char buf[4096];
  for (int i = 0; i < n + 100; ++i) {
    auto t0 = clock_type::now();
    if (::write(in[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) std::exit(1);
    // One response line; python writes it in one piece.
    std::string got;
    while (got.find('\n') == std::string::npos) {
      ssize_t r = ::read(out[0], buf, sizeof buf);
      if (r <= 0) std::exit(1);
      got.append(buf, static_cast<std::size_t>(r));
    }
    if (i >= 100) us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
  }
  ::close(in[1]);
  ::close(out[0]);
  ::waitpid(pid, nullptr, 0);
  return us;
}

std::vector<double> through_session(corral::runtime& rt, const std::string& tier, int n) {
  corral::session_request r;
  r.argv = {"/usr/bin/python3", "-u", "-c", kEcho};
  r.tier = tier;
  auto s = corral::session_client::open(rt, r);
  if (!s) {
    std::fprintf(stderr, "open_session: %s\n", s.error().describe().c_str());
    std::exit(1);
  }
  std::vector<double> us;
  for (int i = 0; i < n + 100; ++i) {
    auto t0 = clock_type::now();
    if (!(*s)->send(kRequest) || !(*s)->receive(std::chrono::seconds(10))) {
      std::fprintf(stderr, "round trip %d failed\n", i);
      std::exit(1);
    }
    if (i >= 100) us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
  }
  (*s)->close();
  (void)(*s)->wait_ended(std::chrono::seconds(10));
  return us;
}

} // namespace

int main(int argc, char** argv) {
  std::string tier = "host";
  int sessions = 500;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--tier") == 0) tier = argv[++i];
    else if (std::strcmp(argv[i], "--sessions") == 0) sessions = std::atoi(argv[++i]);
  }
  int n = std::getenv("BENCH_SESSION_N") ? std::atoi(std::getenv("BENCH_SESSION_N")) : 5000;
  spdlog::set_level(spdlog::level::warn);

  corral::runtime_options o;
  o.prof.tier = tier;
  o.allow_host = true;
  o.exec_helper = CORRAL_BENCH_HELPER;
  auto rt = corral::runtime::start(std::move(o));
  if (!rt) {
    std::fprintf(stderr, "runtime: %s\n", rt.error().describe().c_str());
    return 1;
  }

  auto pipe_stats = summarize(plain_pipe(n));
  auto session_stats = summarize(through_session(**rt, tier, n));
  std::printf("session_rtt_plain_pipe     median_us=%.1f p99_us=%.1f n=%d\n", pipe_stats.median_us, pipe_stats.p99_us, n);
  std::printf("session_rtt_stdio_session  median_us=%.1f p99_us=%.1f n=%d tier=%s\n", session_stats.median_us,
              session_stats.p99_us, n, tier.c_str());
  std::printf("session_rtt_added          median_us=%.1f p99_us=%.1f\n", session_stats.median_us - pipe_stats.median_us,
              session_stats.p99_us - pipe_stats.p99_us);

  // Idle sessions: `cat` waiting on its stdin; the runtime's RSS before and after, once all run.
  caf::scoped_actor owner{(*rt)->system()};
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  long before = rss_kib();
  std::vector<corral::session_handle> open;
  corral::session_request idle;
  idle.argv = {"cat"};
  idle.tier = tier;
  auto t0 = clock_type::now();
  for (int i = 0; i < sessions; ++i) {
    auto h = (*rt)->open_session(idle, caf::actor_cast<caf::actor>(owner));
    if (!h) {
      std::fprintf(stderr, "session %d: %s\n", i, h.error().describe().c_str());
      break;
    }
    open.push_back(*h);
  }
  // Wait (bounded) until every session is running.
  for (auto& h : open) {
    for (int tries = 0; tries < 600; ++tries) {
      corral::session_phase phase = corral::session_phase::starting;
      owner->request(h.actor, std::chrono::seconds(5), corral::info_atom::value)
          .receive([&](corral::session_info& i) { phase = i.phase; }, [](caf::error&) {});
      if (phase != corral::session_phase::starting) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  auto opened_s = std::chrono::duration<double>(clock_type::now() - t0).count();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  long after = rss_kib();
  std::printf("session_idle_memory        sessions=%zu rss_delta_kib=%ld per_session_kib=%.1f open_s=%.2f tier=%s\n",
              open.size(), after - before, open.empty() ? 0.0 : double(after - before) / double(open.size()),
              opened_s, tier.c_str());
  for (auto& h : open) owner->send(h.actor, corral::close_atom::value);
  std::size_t ended = 0;
  while (ended < open.size()) {
    bool got = false;
    owner->receive([&](corral::session_ended&) { ++ended; got = true; }, caf::after(std::chrono::seconds(30)) >> [] {});
    if (!got) break;
  }
  std::printf("session_idle_closed        ended=%zu of %zu\n", ended, open.size());
  return 0;
}
