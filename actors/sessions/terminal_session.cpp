#include "actors/sessions/terminal_session.hpp"

#include <algorithm>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/sessions/session_lifecycle.hpp"
#include "actors/sessions/session_log.hpp"

namespace corral {

namespace {

// Read ahead of the actor: a terminal is consumed at once into the scrollback, so this only
// bounds what one burst of output costs.
constexpr std::uint64_t kReadWindow = 64 * 1024;
// How much of the scrollback the end report carries.
constexpr std::size_t kEndTailBytes = 4096;

} // namespace

// One client seeing the terminal.
struct terminal_viewer {
  caf::actor actor;
  bool writer = false;
};

struct terminal_session_state : session_kind {
  using self_ptr = caf::stateful_actor<terminal_session_state>*;

  // CAF constructs the state with its actor.
  explicit terminal_session_state(self_ptr self) : self(self), child(self, *this, session_type::terminal) {}

  self_ptr self;
  session_lifecycle child;
  terminal_request options;
  // Who sees it now: each may go away while the terminal lives.
  std::vector<terminal_viewer> viewers;
  caf::actor watcher;  // told who is attached (a workspace's registry), if anyone
  session_log scrollback;
  std::uint64_t read_outstanding = 0;
  std::uint64_t inputs = 0;

  std::vector<caf::actor> peers() const override {
    std::vector<caf::actor> out;
    for (auto& v : viewers) out.push_back(v.actor);
    return out;
  }

  session_streams streams() override {
    session_streams s;
    s.out = {self, kReadWindow, overflow_policy::pause};
    s.err = {self, 0, overflow_policy::pause};  // unused: the pty carries stderr too
    s.pty = {true, options.rows, options.cols, options.echo};
    read_outstanding = kReadWindow;
    return s;
  }

  void on_spawned() override {
    if (child.reason_decided()) child.terminate();  // ended while it was being spawned
  }

  void fill_end(session_ended& end, const lease_report&) override {
    auto tail = scrollback.contents();
    end.stderr_tail = tail.size() > kEndTailBytes ? tail.substr(tail.size() - kEndTailBytes) : tail;
    end.messages_in = inputs;
  }

  void fill_info(session_info& info) const override {
    info.messages_in = inputs;
    info.buffered_bytes = scrollback.contents().size();
  }

  terminal_viewer* viewer_of(const caf::actor_addr& who) {
    for (auto& v : viewers)
      if (v.actor.address() == who) return &v;
    return nullptr;
  }

  terminal_viewer* writer() {
    for (auto& v : viewers)
      if (v.writer) return &v;
    return nullptr;
  }

  void report_viewers() {
    if (watcher)
      self->send(watcher, terminal_viewers{child.number(), static_cast<std::uint32_t>(viewers.size()), writer() != nullptr});
  }

  // Takes `who` out of the viewers (and out of the monitored), if it was one.
  void forget(const caf::actor_addr& who) {
    auto it = std::find_if(viewers.begin(), viewers.end(), [&](auto& v) { return v.actor.address() == who; });
    if (it == viewers.end()) return;
    self->demonitor(it->actor);
    viewers.erase(it);
    report_viewers();
  }

  terminal_attached attach(const caf::actor& who, bool as_writer, bool take_over) {
    if (!who) return {false, make_failure(failure_kind::invalid_request, "attach needs a viewer"), {}, false};
    auto* current = writer();
    bool mine = current && current->actor == who;
    if (as_writer && current && !mine && !take_over)
      return {false,
              make_failure(failure_kind::conflict, "the terminal already has a writer; attach as a viewer, or take over"),
              {}, false};
    if (as_writer && current && !mine) {
      current->writer = false;
      self->send(current->actor, terminal_demoted{child.number()});
    }
    if (auto* known = viewer_of(who.address())) {
      known->writer = known->writer || as_writer;
    } else {
      viewers.push_back({who, as_writer});
      self->monitor(who);
    }
    report_viewers();
    return {true, {}, scrollback.contents(), as_writer || mine};
  }

  static inline const char* name = "terminal_session";
};

namespace {

using self_ptr = terminal_session_state::self_ptr;

void on_output(self_ptr self, std::string& bytes) {
  auto& st = self->state;
  st.scrollback.append(bytes);
  st.read_outstanding -= std::min<std::uint64_t>(st.read_outstanding, bytes.size());
  if (st.read_outstanding < kReadWindow / 2 && !st.child.at_eof(stream_kind::out)) {
    st.child.io().add_credit(st.child.process(), stream_kind::out, kReadWindow - st.read_outstanding);
    st.read_outstanding = kReadWindow;
  }
  for (std::size_t k = 0; k < st.viewers.size(); ++k) {
    bool last = k + 1 == st.viewers.size();
    self->send(st.viewers[k].actor, terminal_output{st.child.number(), last ? std::move(bytes) : bytes});
  }
}

caf::behavior terminal_session(self_ptr self, execution_plan exec, terminal_request options, std::uint64_t number,
                               session_env env) {
  auto& st = self->state;
  st.options = std::move(options);
  st.scrollback = session_log(st.options.scrollback_bytes);
  self->set_down_handler([=](caf::down_msg& down) {
    auto& s = self->state;
    if (s.child.handle_down(down)) return;
    // A viewer that goes away only detaches: the terminal outlives it.
    s.forget(down.source);
    if (s.watcher && down.source == s.watcher.address()) s.watcher = caf::actor{};
  });
  st.child.start(std::move(exec), number, std::move(env), st.options.startup_timeout, st.options.lifetime, false);
  return st.child.handlers().or_else(
      [=](io_chunk& chunk) {
        if (chunk.id != self->state.child.process() || chunk.stream != stream_kind::out) return;
        on_output(self, chunk.bytes);
      },
      [=](io_written&) {},
      [=](io_stdin_closed&) {},
      [=](attach_atom, caf::actor& viewer, bool writer, bool take_over) {
        return self->state.attach(viewer, writer, take_over);
      },
      [=](reattach_atom, caf::actor& client) -> std::string { return self->state.attach(client, true, true).scrollback; },
      [=](detach_atom, caf::actor& viewer) { self->state.forget(viewer.address()); },
      [=](detach_atom) {
        auto& s = self->state;
        for (auto& v : s.viewers) self->demonitor(v.actor);
        s.viewers.clear();
        s.report_viewers();
      },
      [=](watch_atom, caf::actor& watcher) {
        auto& s = self->state;
        if (s.watcher) self->demonitor(s.watcher);
        s.watcher = watcher;
        if (watcher) self->monitor(watcher);
        s.report_viewers();
      },
      [=](input_atom, std::string& bytes) {
        auto& s = self->state;
        if (s.child.phase() != session_phase::starting && s.child.phase() != session_phase::running) return;
        ++s.inputs;
        s.child.write_input(std::move(bytes));
      },
      [=](resize_atom, std::uint16_t rows, std::uint16_t cols) {
        auto& s = self->state;
        // Before the launch (the lease is still being taken) the size is the one the pty
        // is made with (streams()); after it, the pty is resized in the loop's order.
        s.options.rows = rows;
        s.options.cols = cols;
        if (s.child.launched()) s.child.io().resize(s.child.process(), rows, cols);
      });
}

} // namespace

std::vector<std::string> terminal_program(const terminal_request& request) {
  if (request.argv.empty()) return {"/bin/sh"};
  return request.argv;
}

expected<caf::actor> open_session(caf::actor_system& system, const terminal_request& request, session_opening at) {
  if (request.rows == 0 || request.cols == 0)
    return make_failure(failure_kind::invalid_request, "a terminal needs at least one row and one column");
  auto argv = terminal_program(request);
  auto env = request.env;
  if (!env.count("TERM")) env["TERM"] = "xterm-256color";
  auto exec = plan_session_child(request, std::move(argv), std::move(env), at);
  if (!exec) return exec.error();
  return system.spawn(terminal_session, std::move(*exec), request, at.number, std::move(at.env));
}

} // namespace corral
