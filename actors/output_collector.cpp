#include "actors/output_collector.hpp"

#include <memory>

#include "actors/atoms.hpp"
#include "actors/execution_messages.hpp"
#include "config/utf8.hpp"

namespace corral {

captured_stream finalize_capture(std::string data, std::uint64_t cap, std::uint64_t dropped) {
  captured_stream out;
  if (data.size() > cap) {
    dropped += data.size() - cap;
    data.resize(cap);
  }
  if (dropped > 0) {
    auto tail = incomplete_utf8_tail(data);
    data.resize(data.size() - tail);
    dropped += tail;
  }
  out.data = std::move(data);
  out.truncated = dropped > 0;
  out.dropped_bytes = dropped;
  return out;
}

output_route collector_route(caf::actor collector, std::uint64_t cap, bool live) {
  if (!live || cap <= kLiveOutputWindow) return {std::move(collector), cap, overflow_policy::discard};
  return {std::move(collector), kLiveOutputWindow, overflow_policy::pause};
}

caf::behavior output_collector(caf::event_based_actor* self, caf::actor owner, stream_kind stream,
                               std::uint64_t cap, caf::actor live, io_loop* io) {
  struct capture {
    std::string kept;
    std::uint64_t dropped = 0;
    process_id process = 0;
    // The credit given so far, while the loop paces the stream (see collector_route).
    std::uint64_t granted = 0;
    bool paced = false;
  };
  auto state = std::make_shared<capture>();
  auto route = collector_route(self, cap, static_cast<bool>(live));
  state->paced = io && route.when_exhausted == overflow_policy::pause;
  state->granted = route.credit;
  return {
      [=](io_chunk& chunk) {
        state->process = chunk.id;
        // The loop never forwards more than the credit (the cap); this keeps the bound
        // even if a caller grants more.
        auto room = cap > state->kept.size() ? cap - state->kept.size() : 0;
        auto take = std::min<std::uint64_t>(room, chunk.bytes.size());
        if (live && take > 0) self->send(live, output_chunk{stream, chunk.bytes.substr(0, take)});
        state->kept.append(chunk.bytes, 0, take);
        state->dropped += chunk.bytes.size() - take;
      },
      [=](ack_atom, std::uint64_t bytes) {
        if (!state->paced) return;
        auto more = std::min(bytes, cap - state->granted);
        state->granted += more;
        if (more > 0) io->add_credit(state->process, stream, more);
        if (state->granted == cap) {
          // The cap is reached: the rest is counted and discarded, never waited for.
          state->paced = false;
          io->set_overflow(state->process, stream, overflow_policy::discard);
        }
      },
      [=](io_eof& eof) {
        auto captured = finalize_capture(std::move(state->kept), cap, eof.dropped + state->dropped);
        self->send(owner, stream_done{stream, std::move(captured)});
        self->quit();
      },
  };
}

} // namespace corral
