#include "proto/cli/ending.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>

#include "proto/cli/commands.hpp"
#include "proto/jsonrpc/result_json.hpp"

namespace corral::cli {

namespace {

std::string size_text(std::uint64_t bytes) {
  if (bytes % (1024 * kMiB) == 0) return std::to_string(bytes / (1024 * kMiB)) + " GiB";
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes) + " bytes";
}

std::string duration_text(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + " s";
  return std::to_string(d.count()) + " ms";
}

} // namespace

std::string signal_name(int sig) {
  if (const char* abbrev = ::sigabbrev_np(sig)) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(sig);
}

int failure_status(const failure& f) {
  if (f.kind != failure_kind::spawn_failed) return kExitRefused;
  // The helper's exec failure ends "(errno N)"; the PATH search says "not found".
  auto has = [&](const char* s) { return f.message.find(s) != std::string::npos; };
  // Its working directory could not be entered: the program was never looked for.
  if (f.message.rfind("chdir:", 0) == 0) return kExitRefused;
  if (has("(errno 13)") || has("(errno 8)")) return kExitNotExecutable;
  if (has("not found") || has("(errno 2)")) return kExitNotFound;
  return kExitRefused;
}

int refuse(const failure& f, bool json) {
  if (json) std::cout << to_json(f).dump() << "\n";
  std::cerr << "corral: " << f.describe() << "\n";
  return failure_status(f);
}

int result_status(const exec_result& r) {
  if (r.timed_out) return kExitTimeout;
  if (r.term_signal) return 128 + *r.term_signal;
  return r.exit_code.value_or(kExitRefused);
}

int session_status(const session_ended& e) {
  if (e.reason == session_end_reason::failed) return kExitRefused;
  if (e.reason == session_end_reason::lifetime) return kExitTimeout;
  if (e.term_signal) return 128 + *e.term_signal;
  return e.exit_code.value_or(0);
}

std::string ending_line(const exec_result& r, const limits* effective) {
  auto of = [](const std::string& what) { return what.empty() ? std::string() : " of " + what; };
  auto killed = [&] { return r.term_signal ? " (" + signal_name(*r.term_signal) + ")" : std::string(); };
  switch (r.how) {
    case verdict::timed_out:
      return "corral: timed out" + (effective ? " after " + duration_text(effective->timeout) : std::string()) +
             " and was terminated (--timeout, or timeout under [sandbox.limits])";
    case verdict::out_of_memory:
      return "corral: out of memory: the memory limit" +
             of(effective && effective->memory_bytes ? size_text(*effective->memory_bytes) : "") + " was reached" +
             killed() + " (--memory, or memory under [sandbox.limits])";
    case verdict::pids_limit:
      return "corral: the pids limit" +
             of(effective && effective->pids ? std::to_string(*effective->pids) + " processes" : "") +
             " was reached (--pids, or pids under [sandbox.limits])";
    case verdict::compile_failed:
      return "corral: compile error (the compiler exited with " +
             (r.term_signal ? signal_name(*r.term_signal) : "status " + std::to_string(r.exit_code.value_or(-1))) +
             "); the program did not run";
    case verdict::signaled: {
      int sig = r.term_signal.value_or(0);
      std::string why = sig == SIGXFSZ ? ": a file reached the file size limit" : "";
      return "corral: the program was killed by signal " + std::to_string(sig) + " (" + signal_name(sig) + ")" + why;
    }
    case verdict::cancelled: return "corral: the execution was cancelled" + killed();
    case verdict::exited:
    case verdict::output_truncated: break;
  }
  return "";
}

std::string session_ending_line(const session_ended& e, const char* what, std::chrono::milliseconds lifetime,
                                std::chrono::milliseconds idle) {
  std::string the = std::string("the ") + what;
  switch (e.reason) {
    case session_end_reason::lifetime:
      return "corral: " + the + "'s lifetime of " + duration_text(lifetime) + " was reached; it was ended";
    case session_end_reason::idle:
      return "corral: no message either way for " + duration_text(idle) + " (--idle); " + the + " was ended";
    case session_end_reason::exited:
      if (e.term_signal)
        return "corral: " + the + " was killed by signal " + std::to_string(*e.term_signal) + " (" +
               signal_name(*e.term_signal) + ")";
      break;
    case session_end_reason::closed:
    case session_end_reason::cancelled:
    case session_end_reason::failed: break;
  }
  return "";
}

exec_result ending_of(const nlohmann::json& result) {
  exec_result r;
  auto verdict_name = result.value("verdict", std::string());
  for (auto v : {verdict::exited, verdict::signaled, verdict::timed_out, verdict::out_of_memory, verdict::pids_limit,
                 verdict::output_truncated, verdict::compile_failed, verdict::cancelled})
    if (verdict_name == to_string(v)) r.how = v;
  r.timed_out = result.value("timed_out", false);
  if (auto sig = result.find("signal"); sig != result.end() && sig->is_number_integer()) r.term_signal = sig->get<int>();
  if (auto code = result.find("exit_code"); code != result.end() && code->is_number_integer())
    r.exit_code = code->get<int>();
  return r;
}

bool mentions_full_filesystem(std::string_view piece) {
  return piece.find(std::strerror(ENOSPC)) != std::string_view::npos ||
         piece.find(std::strerror(EFBIG)) != std::string_view::npos;
}

std::string full_filesystem_line(const limits& effective) {
  return "corral: a write failed for want of space: /work holds at most " + size_text(effective.scratch_bytes) +
         ", /tmp " + size_text(effective.tmp_bytes) + " and /dev/shm " + size_text(effective.shm_bytes) +
         ", all within the memory limit (scratch_size, tmp_size, shm_size under [sandbox.limits])";
}

std::string truncation_lines(const exec_result& r, std::uint64_t cap) {
  std::string out;
  for (auto [name, s] : {std::pair{"stdout", &r.out}, std::pair{"stderr", &r.err}})
    if (s->truncated)
      out += std::string("corral: ") + name + " truncated at " + std::to_string(cap) + " bytes; " +
             std::to_string(s->dropped_bytes) + " bytes dropped (--output-cap, or output_cap under [sandbox.limits])\n";
  return out;
}

} // namespace corral::cli
