#include "proto/e2b/e2b_process.hpp"

#include <algorithm>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/sessions/session_messages.hpp"
#include "proto/e2b/e2b_json.hpp"
#include "proto/e2b/e2b_messages.hpp"

namespace corral {

namespace {

using json = nlohmann::json;

// Events a subscriber may hold unacknowledged before the child's output waits: a slow
// reader slows the child (its stdout pipe fills), it does not grow the daemon.
constexpr std::uint64_t kSubscriberWindow = 8;
constexpr std::uint64_t kSessionCredit = 8;
constexpr auto kOpenBound = std::chrono::seconds(60);

enum class process_phase : std::uint8_t { starting, running, gone };

struct subscriber {
  caf::actor actor;
  std::uint64_t unacked = 0;
};

struct e2b_process_state {
  e2b_process_state() = default;  // CAF 0.17 would build an aggregate from the actor pointer
  e2b_process_spec spec;
  caf::actor supervisor;
  caf::actor gateway;
  process_phase phase = process_phase::starting;
  caf::actor session;
  std::vector<subscriber> subscribers;
  std::uint64_t owed_credit = 0;  // stdout messages taken and not yet given back as credit
  bool cancel_on_open = false;    // the sandbox ended while it was starting
};

using self_ptr = caf::stateful_actor<e2b_process_state>*;

std::string event(const json& e) { return json{{"event", e}}.dump(); }

// What a stream hears first, on Start and on each Connect.
std::string start_event(std::uint32_t pid) { return event({{"start", {{"pid", pid}}}}); }

void publish(self_ptr self, const std::string& text) {
  for (auto& s : self->state.subscribers) {
    ++s.unacked;
    self->send(s.actor, e2b_event{text});
  }
}

// Gives the session back the credit its messages took, while every subscriber keeps up.
void regrant(self_ptr self) {
  auto& st = self->state;
  if (!st.session || st.spec.pty) return;
  bool room = std::all_of(st.subscribers.begin(), st.subscribers.end(),
                          [](const subscriber& s) { return s.unacked < kSubscriberWindow; });
  if (room && st.owed_credit > 0) {
    self->send(st.session, ack_atom::value, st.owed_credit);
    st.owed_credit = 0;
  }
}

void finish(self_ptr self, const std::string& end_frame) {
  auto& st = self->state;
  st.phase = process_phase::gone;
  for (auto& s : st.subscribers) self->send(s.actor, e2b_stream_end{end_frame});
  st.subscribers.clear();
  self->send(st.gateway, e2b_gone_atom::value, st.spec.sandbox, st.spec.pid);
  self->quit();
}

json end_event(const session_ended& e, const e2b_process_spec& spec) {
  json end = json::object();
  if (e.exit_code) {
    end["exitCode"] = *e.exit_code;
    end["exited"] = true;
    end["status"] = "exit status " + std::to_string(*e.exit_code);
  } else {
    // As Go reports a signalled process: exit code -1, not exited.
    end["exitCode"] = -1;
    end["exited"] = false;
    end["status"] = e.term_signal ? "signal: " + std::to_string(*e.term_signal) : std::string("killed");
  }
  switch (e.reason) {
    case session_end_reason::lifetime:
      end["error"] = "the command's timeout (" + std::to_string(spec.lifetime.count()) + " ms) ended it";
      break;
    case session_end_reason::failed: end["error"] = e.detail; break;
    case session_end_reason::cancelled: end["error"] = "ended by a signal or with its sandbox"; break;
    default: break;
  }
  return json{{"end", end}};
}

void opened(self_ptr self, session_opened& o) {
  auto& st = self->state;
  if (!o.ok) return finish(self, stream_end(connect_code(o.error.kind), o.error.message));
  st.session = o.session;
  st.phase = process_phase::running;
  if (st.spec.pty) {
    // A workspace keeps its terminals; this process views and writes the one it opened.
    self->request(st.session, std::chrono::seconds(30), attach_atom::value, caf::actor{self}, true, true)
        .then([](terminal_attached&) {}, [](caf::error&) {});
  } else if (!st.spec.stdin_open) {
    self->send(st.session, stdin_eof_atom::value);
  }
  self->monitor(st.session);
  if (st.cancel_on_open) self->send(st.session, cancel_atom::value);
  publish(self, start_event(st.spec.pid));
}

void open(self_ptr self) {
  auto& st = self->state;
  auto failed = [=](caf::error& e) {
    finish(self, stream_end("internal", "opening the process: " + self->system().render(e)));
  };
  std::vector<std::string> argv{st.spec.cmd};
  argv.insert(argv.end(), st.spec.args.begin(), st.spec.args.end());
  if (st.spec.pty) {
    terminal_request r;
    r.argv = std::move(argv);
    r.env = st.spec.env;
    r.rows = st.spec.rows;
    r.cols = st.spec.cols;
    r.lifetime = st.spec.lifetime;
    r.workspace = st.spec.sandbox;
    r.principal = st.spec.principal;
    r.cwd = st.spec.cwd;
    self->request(st.supervisor, kOpenBound, terminal_atom::value, std::move(r))
        .then([=](session_opened& o) { opened(self, o); }, failed);
  } else {
    session_request r;
    r.argv = std::move(argv);
    r.env = st.spec.env;
    r.framing = framing_mode::raw;
    r.forward_stderr = true;
    r.initial_credit = kSessionCredit;
    r.lifetime = st.spec.lifetime;
    r.workspace = st.spec.sandbox;
    r.principal = st.spec.principal;
    r.cwd = st.spec.cwd;
    self->request(st.supervisor, kOpenBound, session_atom::value, std::move(r), caf::actor{self})
        .then([=](session_opened& o) { opened(self, o); }, failed);
  }
}

http_response ok_empty() { return json_response(200, json::object()); }

http_response not_running(const e2b_process_spec& spec) {
  return connect_error("failed_precondition", "process " + std::to_string(spec.pid) + " is still starting");
}

caf::behavior e2b_process(self_ptr self, e2b_process_spec spec, caf::actor supervisor, caf::actor gateway,
                          caf::actor first) {
  auto& st = self->state;
  st.spec = std::move(spec);
  st.supervisor = std::move(supervisor);
  st.gateway = std::move(gateway);
  st.subscribers.push_back({first, 0});
  self->monitor(first);
  self->set_down_handler([=](caf::down_msg& d) {
    auto& s = self->state;
    if (s.session && d.source == s.session.address()) {
      // The session went without telling how (it always sends session_ended first).
      if (s.phase != process_phase::gone) finish(self, stream_end("internal", "the process's session ended unreported"));
      return;
    }
    // A subscriber gone (its client hung up): the process runs on.
    s.subscribers.erase(std::remove_if(s.subscribers.begin(), s.subscribers.end(),
                                       [&](const subscriber& x) { return x.actor.address() == d.source; }),
                        s.subscribers.end());
    regrant(self);
  });
  open(self);
  return {
      [=](session_message& m) {
        ++self->state.owed_credit;
        publish(self, event({{"data", {{"stdout", base64_encode(m.body)}}}}));
        regrant(self);
      },
      [=](session_stderr& e) { publish(self, event({{"data", {{"stderr", base64_encode(e.bytes)}}}})); },
      [=](terminal_output& o) { publish(self, event({{"data", {{"pty", base64_encode(o.bytes)}}}})); },
      [=](session_refused&) {},
      [=](session_gate&) {},
      [=](session_network&) {},
      [=](terminal_demoted&) {},
      [=](session_ended& e) {
        publish(self, event(end_event(e, self->state.spec)));
        finish(self, stream_end());
      },
      [=](ack_atom, std::uint64_t n) {
        auto sender = self->current_sender();
        for (auto& s : self->state.subscribers)
          if (s.actor.address() == sender) s.unacked -= std::min(s.unacked, n);
        regrant(self);
      },
      [=](e2b_subscribe_atom, caf::actor& who) {
        auto& s = self->state;
        s.subscribers.push_back({who, 0});
        self->monitor(who);
        if (s.phase == process_phase::running) {
          ++s.subscribers.back().unacked;
          self->send(who, e2b_event{start_event(s.spec.pid)});
        }
      },
      [=](input_atom, std::string& bytes, bool pty) -> caf::result<http_response> {
        auto& s = self->state;
        if (s.phase != process_phase::running) return not_running(s.spec);
        if (pty != s.spec.pty)
          return connect_error("invalid_argument", pty ? "process " + std::to_string(s.spec.pid) + " has no pty"
                                                       : "process " + std::to_string(s.spec.pid) + " reads a pty, not stdin");
        if (pty) {
          self->send(s.session, input_atom::value, std::move(bytes));
          return ok_empty();
        }
        if (!s.spec.stdin_open)
          return connect_error("failed_precondition",
                               "process " + std::to_string(s.spec.pid) + " was started without stdin (stdin: true enables it)");
        auto rp = self->make_response_promise<http_response>();
        self->request(s.session, std::chrono::seconds(30), send_atom::value, std::move(bytes))
            .then(
                [rp](session_reply& r) mutable {
                  rp.deliver(r.ok ? ok_empty() : connect_error(connect_code(r.error.kind), r.error.message));
                },
                [rp](caf::error&) mutable { rp.deliver(connect_error("unavailable", "the process's stdin did not take the input in 30 s")); });
        return rp;
      },
      [=](stdin_eof_atom) -> http_response {
        auto& s = self->state;
        if (s.phase != process_phase::running) return not_running(s.spec);
        if (s.spec.pty) return connect_error("invalid_argument", "a pty process has no stdin to close");
        self->send(s.session, stdin_eof_atom::value);
        return ok_empty();
      },
      [=](signal_atom, int) -> http_response {
        auto& s = self->state;
        // Either signal ends the process group through its lease: SIGTERM, the grace, SIGKILL.
        if (s.phase == process_phase::running) self->send(s.session, cancel_atom::value);
        else s.cancel_on_open = true;
        return ok_empty();
      },
      [=](resize_atom, std::uint16_t rows, std::uint16_t cols) -> http_response {
        auto& s = self->state;
        if (s.phase != process_phase::running) return not_running(s.spec);
        if (!s.spec.pty) return connect_error("invalid_argument", "process " + std::to_string(s.spec.pid) + " has no pty");
        self->send(s.session, resize_atom::value, rows, cols);
        return ok_empty();
      },
      [=](cancel_atom) {
        auto& s = self->state;
        if (s.phase == process_phase::running) self->send(s.session, cancel_atom::value);
        else s.cancel_on_open = true;
      },
  };
}

} // namespace

json process_listing(const e2b_process_spec& spec) {
  json config = {{"cmd", spec.cmd}, {"args", spec.args}, {"envs", spec.request_envs}};
  if (!spec.cwd.empty()) config["cwd"] = spec.cwd;
  json j = {{"config", config}, {"pid", spec.pid}};
  if (!spec.tag.empty()) j["tag"] = spec.tag;
  return j;
}

caf::actor spawn_e2b_process(caf::actor_system& system, e2b_process_spec spec, caf::actor supervisor,
                             caf::actor gateway, caf::actor first_subscriber) {
  return system.spawn(e2b_process, std::move(spec), std::move(supervisor), std::move(gateway),
                      std::move(first_subscriber));
}

} // namespace corral
