// corral workspace (alias ws): named, persistent /work dirs in the daemon, for commands
// that build on one another (proto/PROTOCOL.md, "Workspaces"). Every verb is one or a few
// calls on a `corral serve` daemon: workspaces belong to the daemon and to the caller's uid,
// not to a CLI process, so there is no in-process form.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "config/durations.hpp"
#include "config/sizes.hpp"
#include "config/write_all.hpp"
#include "proto/cli/change_lines.hpp"
#include "proto/cli/commands.hpp"
#include "proto/cli/limit_flags.hpp"
#include "proto/cli/workspace_verbs.hpp"
#include "proto/daemon/default_socket.hpp"
#include "proto/daemon/daemon_client.hpp"
#include "proto/jsonrpc/workspace_json.hpp"

namespace corral::cli {

namespace {

using nlohmann::json;

const char* const kUsage = R"(usage: corral workspace VERB [--connect SOCKET] [--json] ...   (alias: corral ws)

A workspace is a sandbox that outlives commands: every command run in it enters the same
jail, sees its files at /work and its /tmp, and can reach a server an earlier one left
running on 127.0.0.1; one memory, pids and cpu budget bounds them all. Workspaces live in the daemon
(`corral serve`) and belong to your uid; they end when told, after idling, or at their
lifetime's end.

verbs:
  create [NAME] [--idle D] [--lifetime D] [--memory SIZE] [--pids N] [--cpu CORES]
         [--keep-files] [--from-snapshot S]
                                  make one (its files as snapshot S holds them, if given);
                                  prints its id (limits only narrow the daemon's)
  ls                              yours, one a line: id, name, running, terminals, idle left,
                                  ends (and how many things a daemon restart ended in it)
  inspect W                       one as JSON
  exec W [--changes] [--leave-running] [run options] -- PROGRAM [ARGS...]
                                  run a program in W (as `corral run`; same exit status);
                                  --changes: then list what it changed (A/M/D on stderr);
                                  --leave-running: what it starts in the background stays
  ps W                            W's processes: pid (as inside W), ppid, state, started, command
  kill W PID [-s SIGNAL]          signal one of them (default TERM; KILL, INT, HUP, 9 ...)
  terminals W                     W's terminals: id, started, viewers, whether one types, command
                                  (`corral shell --connect S --workspace W` opens or attaches)
  pause W                         freeze everything in W (nothing new starts until resume)
  resume W                        let it go on
  cp SRC DST                      copy a file in or out: one side is W:PATH (PATH relative
                                  to /work or under it), the other a local file or - (stdio)
  files W [PATH] [--depth N]      list a directory: type, mode, size, path
  mark W LABEL                    remember the files as they are now
  changes W [--since MARK]        what was added (A), modified (M) or removed (D) since MARK
                                  (default: since the workspace was made)
  rm W [--keep-files]             end it (its files go too, unless kept)
  snapshot W                      archive W's files (no execution may run in it; its
                                  background processes are frozen meanwhile); prints the id
  snapshots                       yours, one a line: id, workspace, bytes, entries, taken
  snapshot-rm S                   remove snapshot S

W is a workspace's id or name. Durations: 500ms, 30s, 5m, 2h or plain seconds.
--connect SOCKET  the daemon (default: its default socket)
--json            print the daemon's answer as JSON

exit status: 0 done; 125 refused or failed (the reason on stderr); exec: as corral run.
)";

constexpr std::uint64_t kPiece = kMaxFilePiece;

std::string seconds_text(double s) {
  if (s <= 0) return "-";
  auto whole = static_cast<long long>(s);
  if (whole >= 3600) return std::to_string(whole / 3600) + "h" + std::to_string(whole % 3600 / 60) + "m";
  if (whole >= 60) return std::to_string(whole / 60) + "m" + std::to_string(whole % 60) + "s";
  return std::to_string(whole) + "s";
}

expected<std::string> flag_value(const std::vector<std::string>& v, std::size_t& i) {
  if (i + 1 >= v.size()) return make_failure(failure_kind::invalid_request, v[i] + " needs a value");
  return v[++i];
}

int create(const ws_args& a) {
  workspace_options o;
  limit_flags limits;
  const auto& v = a.rest;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (auto limit = parse_limit_flag(v, i, limits); !limit) return usage_error(limit.error().message);
    else if (*limit) continue;
    if (v[i] == "--idle" || v[i] == "--lifetime") {
      auto text = flag_value(v, i);
      if (!text) return usage_error(text.error().message);
      auto d = parse_duration(*text);
      if (!d) return usage_error(v[i - 1] + ": " + d.error().message);
      (v[i - 1] == "--idle" ? o.idle_timeout : o.lifetime) = *d;
    } else if (v[i] == "--keep-files") {
      o.keep_files = true;
    } else if (v[i] == "--from-snapshot") {
      auto id = flag_value(v, i);
      if (!id) return usage_error(id.error().message);
      o.from_snapshot = *id;
    } else if (!v[i].empty() && v[i][0] == '-') {
      return usage_error("unknown option " + v[i] + " for create");
    } else if (o.name.empty()) {
      o.name = v[i];
    } else {
      return usage_error("create takes one name, not '" + v[i] + "' too");
    }
  }
  if (limits.timeout) return usage_error("--timeout is a run's limit: give it to exec");
  o.memory_bytes = limits.memory_bytes;
  o.pids = limits.pids;
  o.cpu_cores = limits.cpu_cores;
  return call_and_show(a, "workspace.create", workspace_options_to_json(o), [](const json& w) {
    std::cout << w.value("workspace", "") << "\n";
  });
}

int list(const ws_args& a) {
  if (!a.rest.empty()) return usage_error("ls takes no arguments");
  return call_and_show(a, "workspace.list", json::object(), [](const json& r) {
    std::cout << std::left << std::setw(16) << "ID" << std::setw(24) << "NAME" << std::setw(9) << "RUNNING"
              << std::setw(7) << "TERMS" << std::setw(11) << "IDLE LEFT" << "ENDS\n";
    for (auto& w : r.at("workspaces")) {
      std::cout << std::setw(16) << w.value("workspace", "") << std::setw(24) << w.value("name", "") << std::setw(9)
                << w.value("running", 0) << std::setw(7) << w.value("terminals", 0) << std::setw(11)
                << (w.value("running", 0) > 0 ? "(busy)" : seconds_text(w.value("idle_left", 0.0)))
                << time_text(w.value("ends_at", std::int64_t{0}));
      // What a daemon restart ended in it (inspect lists it).
      if (auto lost = w.value("lost", json::array()); !lost.empty()) std::cout << "  (" << lost.size() << " lost at a restart)";
      std::cout << "\n";
    }
  });
}

int one_ref(const ws_args& a, const char* verb, std::string& ref) {
  if (a.rest.size() != 1) return usage_error(std::string(verb) + " takes one workspace (its id or name)");
  ref = a.rest[0];
  return 0;
}

int inspect(const ws_args& a) {
  std::string ref;
  if (int bad = one_ref(a, "inspect", ref)) return bad;
  return call_and_show(a, "workspace.inspect", json{{"workspace", ref}},
                       [](const json& w) { std::cout << w.dump(2) << "\n"; });
}

int remove(const ws_args& a) {
  json p = json::object();
  std::vector<std::string> refs;
  for (auto& s : a.rest) {
    if (s == "--keep-files") p["keep_files"] = true;
    else if (!s.empty() && s[0] == '-') return usage_error("unknown option " + s + " for rm");
    else refs.push_back(s);
  }
  if (refs.size() != 1) return usage_error("rm takes one workspace (its id or name)");
  p["workspace"] = refs[0];
  return call_and_show(a, "workspace.end", p, [](const json& w) {
    std::cout << "ended " << w.value("workspace", "") << (w.value("files_kept", false) ? " (files kept)" : "") << "\n";
  });
}

int mark(const ws_args& a) {
  if (a.rest.size() != 2) return usage_error("mark takes a workspace and a label");
  return call_and_show(a, "workspace.mark", json{{"workspace", a.rest[0]}, {"label", a.rest[1]}},
                       [](const json& r) { std::cout << r.value("mark", "") << "\n"; });
}

int changes(const ws_args& a) {
  json p = json::object();
  std::vector<std::string> refs;
  for (std::size_t i = 0; i < a.rest.size(); ++i) {
    if (a.rest[i] == "--since") {
      auto v = flag_value(a.rest, i);
      if (!v) return usage_error(v.error().message);
      p["since"] = *v;
    } else if (!a.rest[i].empty() && a.rest[i][0] == '-') {
      return usage_error("unknown option " + a.rest[i] + " for changes");
    } else {
      refs.push_back(a.rest[i]);
    }
  }
  if (refs.size() != 1) return usage_error("changes takes one workspace (its id or name)");
  p["workspace"] = refs[0];
  return call_and_show(a, "workspace.changes", p, [](const json& r) {
    for (auto& c : r.at("changes")) std::cout << change_line(c) << "\n";
    if (r.value("truncated", false)) std::cerr << "corral workspace: the list was cut short (too many changes)\n";
  });
}

int files(const ws_args& a) {
  json p = json::object();
  std::vector<std::string> pos;
  for (std::size_t i = 0; i < a.rest.size(); ++i) {
    if (a.rest[i] == "--depth") {
      auto v = flag_value(a.rest, i);
      if (!v) return usage_error(v.error().message);
      char* end = nullptr;
      auto n = std::strtoul(v->c_str(), &end, 10);
      if (v->empty() || *end != '\0' || n == 0 || n > 64) return usage_error("--depth takes 1 to 64, not '" + *v + "'");
      p["depth"] = n;
    } else if (!a.rest[i].empty() && a.rest[i][0] == '-') {
      return usage_error("unknown option " + a.rest[i] + " for files");
    } else {
      pos.push_back(a.rest[i]);
    }
  }
  if (pos.empty() || pos.size() > 2) return usage_error("files takes a workspace and, optionally, a path in it");
  p["workspace"] = pos[0];
  if (pos.size() == 2) p["path"] = pos[1];
  return call_and_show(a, "workspace.files.list", p, [](const json& r) {
    for (auto& e : r.at("entries")) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", e.value("mode", 0u));
      std::cout << std::left << std::setw(8) << e.value("type", "") << mode << " " << std::right << std::setw(12)
                << e.value("size", std::uint64_t{0}) << "  " << e.value("path", "");
      if (e.contains("symlink_target")) std::cout << " -> " << e.value("symlink_target", "");
      std::cout << "\n";
    }
    if (r.value("truncated", false)) std::cerr << "corral workspace: the listing was cut short\n";
  });
}

// "W:PATH" names a path in a workspace; anything else is local ("./a:b" stays local).
bool split_remote(const std::string& s, std::string& ref, std::string& path) {
  auto colon = s.find(':');
  if (colon == std::string::npos || colon == 0 || s.find('/') < colon) return false;
  ref = s.substr(0, colon);
  path = s.substr(colon + 1);
  if (path.empty()) path = ".";
  return true;
}

// Up to n bytes from fd (fewer only at its end).
expected<std::string> read_piece(int fd, const std::string& from, std::size_t n) {
  std::string bytes(n, '\0');
  std::size_t got = 0;
  while (got < n) {
    auto r = ::read(fd, bytes.data() + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return make_failure(failure_kind::invalid_request, "reading " + from + ": " + std::strerror(errno));
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  bytes.resize(got);
  return bytes;
}

// In: the first piece replaces the file (written whole and renamed over: a reader never
// sees half of it), the rest are appended, one piece in memory at a time.
int copy_in(const ws_args& a, const std::string& from, const std::string& ref, const std::string& path) {
  int fd = from == "-" ? STDIN_FILENO : ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return refuse(make_failure(failure_kind::invalid_request, "cannot read " + from + ": " + std::strerror(errno)));
  auto close_fd = [&] {
    if (fd != STDIN_FILENO) ::close(fd);
  };
  auto c = connect(a);
  if (!c) {
    close_fd();
    return refuse(c.error());
  }
  std::uint64_t mode = 0644;
  struct stat st{};
  if (from != "-" && ::fstat(fd, &st) == 0) mode = st.st_mode & 0777;
  json last;
  for (bool first = true;; first = false) {
    auto piece = read_piece(fd, from, kPiece);
    if (!piece) {
      close_fd();
      return refuse(piece.error());
    }
    if (!first && piece->empty()) break;
    file_call call;
    call.what = first ? file_call::op::write : file_call::op::append;
    call.path = path;
    call.mode = static_cast<std::uint32_t>(mode);
    call.data = std::move(*piece);
    bool short_piece = call.data.size() < kPiece;
    auto r = c->call(first ? "workspace.files.write" : "workspace.files.append", file_call_to_json(ref, call));
    if (!r) {
      close_fd();
      return refuse(r.error());
    }
    last = *r;
    if (short_piece) break;
  }
  close_fd();
  if (a.json) std::cout << last.dump() << "\n";
  return 0;
}

int copy_out(const ws_args& a, const std::string& ref, const std::string& path, const std::string& to) {
  auto c = connect(a);
  if (!c) return refuse(c.error());
  int fd = to == "-" ? STDOUT_FILENO : ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return refuse(make_failure(failure_kind::invalid_request, "cannot write " + to + ": " + std::strerror(errno)));
  std::uint64_t offset = 0;
  int status = 0;
  for (;;) {
    auto r = c->call("workspace.files.read", json{{"workspace", ref}, {"path", path}, {"offset", offset}});
    if (!r) {
      status = refuse(r.error());
      break;
    }
    auto bytes = data_bytes(*r);
    if (!write_all(fd, bytes)) {
      status = refuse(make_failure(failure_kind::internal, "writing " + to + ": " + std::strerror(errno)));
      break;
    }
    offset += bytes.size();
    if (r->value("eof", true) || bytes.empty()) break;
  }
  if (fd != STDOUT_FILENO) ::close(fd);
  return status;
}

int copy(const ws_args& a) {
  if (a.rest.size() != 2) return usage_error("cp takes a source and a destination, one of them W:PATH");
  std::string ref, path;
  bool from_remote = split_remote(a.rest[0], ref, path);
  std::string ref2, path2;
  bool to_remote = split_remote(a.rest[1], ref2, path2);
  if (from_remote == to_remote)
    return usage_error("cp copies between here and a workspace: exactly one side is W:PATH");
  if (to_remote) return copy_in(a, a.rest[0], ref2, path2);
  return copy_out(a, ref, path, a.rest[1]);
}

int exec(const ws_args& a) {
  if (a.rest.empty() || a.rest[0] == "--") return usage_error("exec takes a workspace, then what `corral run` takes");
  std::vector<std::string> run{"--workspace", a.rest[0], "--connect", a.socket};
  if (a.json) run.push_back("--json");
  run.insert(run.end(), a.rest.begin() + 1, a.rest.end());
  return run_command(run);
}

} // namespace

const char* workspace_usage() { return kUsage; }

int workspace_command(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  auto verb = args[0];
  auto a = split_common(std::vector<std::string>(args.begin() + 1, args.end()));
  if (verb == "create") return create(a);
  if (verb == "ls" || verb == "list") return list(a);
  if (verb == "inspect") return inspect(a);
  if (verb == "exec") return exec(a);
  if (verb == "cp") return copy(a);
  if (verb == "files") return files(a);
  if (verb == "mark") return mark(a);
  if (verb == "changes") return changes(a);
  if (verb == "rm" || verb == "end") return remove(a);
  if (verb == "snapshot") return snapshot_verb(a);
  if (verb == "snapshots") return snapshots_verb(a);
  if (verb == "snapshot-rm") return snapshot_rm_verb(a);
  if (verb == "pause") return pause_verb(a);
  if (verb == "resume") return resume_verb(a);
  if (verb == "ps") return ps_verb(a);
  if (verb == "kill") return kill_verb(a);
  if (verb == "terminals") return terminals_verb(a);
  return usage_error("unknown verb '" + verb + "'");
}

} // namespace corral::cli
