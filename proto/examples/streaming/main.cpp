// Runs a program inside corral's default boundary from an agent host, printing its output
// as it arrives (each piece with the time since the start) and then how it ended and what
// was enforced. No CAF code and no internal header: runtime.hpp and its callbacks.
//
//   corral-streaming-example                  # a small Python loop
//   corral-streaming-example -- CMD ARGS...   # anything else
// Ctrl-C cancels the execution (SIGTERM to all of it, SIGKILL after the grace).
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "actors/runtime.hpp"

namespace {

corral::exec_control* g_control = nullptr;

} // namespace

int main(int argc, char** argv) {
  corral::exec_request request;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--") request.argv.assign(argv + i + 1, argv + argc);
  if (request.argv.empty())
    request.argv = {"python3", "-c",
                    "import time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(0.2)"};

  // The default profile: the landlock tier with corral's default limits. An operator's
  // corral.toml would be loaded with config/toml/toml_profile.hpp instead.
  corral::runtime_options options;
  auto rt = corral::runtime::start(std::move(options));
  if (!rt) {
    std::cerr << "corral: " << rt.error().describe() << "\n";
    return 125;
  }

  std::cout << "helper: " << corral::find_exec_helper() << "\n";
  auto t0 = std::chrono::steady_clock::now();
  auto stamp = [&] {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    return "[" + std::to_string(ms) + " ms] ";
  };
  corral::output_callbacks out;
  out.on_started = [&](const std::string& id) { std::cout << stamp() << "started " << id << "\n"; };
  out.on_stdout = [&](std::string_view bytes) { std::cout << stamp() << "stdout: " << bytes << std::flush; };
  out.on_stderr = [&](std::string_view bytes) { std::cout << stamp() << "stderr: " << bytes << std::flush; };

  // Ctrl-C: a handler may only note it; a thread of ours turns it into a cancel.
  corral::exec_control control;
  g_control = &control;
  static volatile std::sig_atomic_t interrupted = 0;
  std::signal(SIGINT, [](int) { interrupted = 1; });
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done) {
      if (interrupted) {
        interrupted = 0;
        g_control->cancel();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });

  auto result = (*rt)->exec(request, out, &control);
  done = true;
  watcher.join();
  if (!result) {
    std::cerr << "corral: " << result.error().describe() << "\n";
    return 125;
  }
  std::cout << stamp() << "ended: " << corral::to_string(result->how);
  if (result->exit_code) std::cout << ", exit code " << *result->exit_code;
  std::cout << "\ntier: " << result->tier << "\nisolation: " << result->isolation << "\nnot enforced:";
  for (auto& what : result->not_enforced) std::cout << " " << what;
  std::cout << "\n";
  return result->exit_code.value_or(1);
}
