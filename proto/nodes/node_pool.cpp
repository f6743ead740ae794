#include "proto/nodes/node_pool.hpp"

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/execution_messages.hpp"
#include "proto/nodes/node_placement.hpp"

namespace corral {

struct node_pool::impl {
  std::unique_ptr<caf::actor_system_config> cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::actor placement;
};

node_pool::node_pool(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

namespace {

expected<placed_result> unwrap(placed_outcome& o) {
  if (!o.ok) return std::move(o.error);
  return std::move(o.placed);
}

} // namespace

expected<std::unique_ptr<node_pool>> node_pool::connect(node_pool_options options) {
  if (options.nodes.empty()) return make_failure(failure_kind::invalid_request, "no nodes given");
  if (auto s = check_node_tls(options.tls); !s) return s.error();
  auto p = std::make_unique<impl>();
  p->cfg = std::make_unique<caf::actor_system_config>();
  p->cfg->set("logger.verbosity", caf::atom("quiet"));
  configure_node_network(*p->cfg, options.tls);
  p->sys = std::make_unique<caf::actor_system>(*p->cfg);
  std::vector<placement_node> nodes;
  for (auto& address : options.nodes) nodes.push_back(reach_node(*p->sys, address));
  p->placement = spawn_node_placement(*p->sys, std::move(nodes), options.load_ttl, options.reconnect);
  return std::unique_ptr<node_pool>(new node_pool(std::move(p)));
}

node_pool::~node_pool() {
  caf::anon_send_exit(impl_->placement, caf::exit_reason::user_shutdown);
  impl_->placement = caf::actor{};
  impl_->sys.reset();
}

expected<placed_result> node_pool::exec(const exec_request& request) {
  caf::scoped_actor self{*impl_->sys};
  expected<placed_result> out = make_failure(failure_kind::internal, "no reply from the node pool");
  // No bound here: the execution has its own deadline on the node, and a lost node
  // answers through the down message or the middleman's connection timeout.
  self->request(impl_->placement, caf::infinite, exec_atom::value, request)
      .receive([&](placed_outcome& o) { out = unwrap(o); },
               [&](caf::error& e) { out = make_failure(failure_kind::internal, "node pool: " + impl_->sys->render(e)); });
  return out;
}

void node_pool::exec_async(const exec_request& request, std::function<void(expected<placed_result>)> done) {
  auto* sys = impl_->sys.get();
  // The request is a spawn argument: an argument-less spawn binds a null reference in
  // CAF 0.17 (see runtime::exec_async).
  auto ask = [placement = impl_->placement, done = std::move(done), sys](caf::event_based_actor* self,
                                                                         exec_request req) {
    self->request(placement, caf::infinite, exec_atom::value, std::move(req))
        .then([=](placed_outcome& o) { done(unwrap(o)); },
              [=](caf::error& e) { done(make_failure(failure_kind::internal, "node pool: " + sys->render(e))); });
  };
  sys->spawn(ask, request);
}

std::vector<node_status> node_pool::status() {
  caf::scoped_actor self{*impl_->sys};
  std::vector<node_status> out;
  self->request(impl_->placement, std::chrono::seconds(10), stats_atom::value)
      .receive([&](std::vector<node_status>& s) { out = std::move(s); }, [](caf::error&) {});
  return out;
}

} // namespace corral
