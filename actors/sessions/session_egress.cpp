#include "actors/sessions/session_egress.hpp"

#include <chrono>

#include <caf/all.hpp>

#include "actors/egress/egress_messages.hpp"
#include "actors/egress/egress_proxy.hpp"

namespace corral {

namespace {
// Above the proxy's own bound for connections still reporting their end (kAuditBound).
constexpr std::chrono::seconds kAuditAnswerBound{10};
} // namespace

void session_egress::start(caf::event_based_actor* self, const execution_plan& plan, io_loop* io) {
  if (plan.network != network_mode::allowlist || proxy_) return;
  proxy_ = self->spawn<caf::linked>(egress_proxy, plan.egress, io, caf::actor_cast<caf::actor>(self));
}

void session_egress::collect(caf::event_based_actor* self, std::function<void()> done) {
  if (!proxy_ || audit_) return done();
  self->request(proxy_, kAuditAnswerBound, audit_atom::value)
      .then(
          [this, done](network_audit& audit) {
            audit_ = std::move(audit);
            done();
          },
          [this, done](caf::error&) {
            // Only a timeout gets here (the proxy is linked): as for an execution, the
            // audit is then empty.
            audit_ = network_audit{};
            done();
          });
}

} // namespace corral
