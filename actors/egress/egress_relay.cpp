#include "actors/egress/egress_relay.hpp"

#include <arpa/inet.h>
#include <algorithm>
#include <cstring>
#include <fcntl.h>

#include <caf/send.hpp>

#include "actors/egress/egress_connection.hpp"
#include "actors/egress/http_proxy_head.hpp"
#include "actors/egress/socks5_handshake.hpp"
#include "actors/egress/tls_client_hello.hpp"
#include "config/network_rule.hpp"

namespace corral {

struct egress_relay::listener {
  uv_tcp_t handle{};
  egress_relay* relay = nullptr;
  process_id process = 0;
  listener_kind kind = listener_kind::http;
};

namespace {

using conn = egress_relay::connection;

uv_handle_t* handle(uv_tcp_t& t) { return reinterpret_cast<uv_handle_t*>(&t); }

socks_reply socks_code(const egress_verdict& v, const std::string& failure) {
  if (!failure.empty()) return failure.rfind("connect", 0) == 0 ? socks_reply::connection_refused : socks_reply::general_failure;
  switch (v.outcome) {
    case egress_outcome::unresolved: return socks_reply::host_unreachable;
    case egress_outcome::malformed: return socks_reply::general_failure;
    default: return socks_reply::not_allowed;
  }
}

std::string http_refusal(const egress_verdict& v, const std::string& failure) {
  if (!failure.empty()) return proxy_response(502, "Bad Gateway", "corral egress: " + failure + "\n");
  if (v.outcome == egress_outcome::malformed) return proxy_response(400, "Bad Request", "corral egress: " + v.reason + "\n");
  if (v.outcome == egress_outcome::unresolved) return proxy_response(502, "Bad Gateway", "corral egress: " + v.reason + "\n");
  return proxy_response(403, "Forbidden", "corral egress: " + v.reason + "\n");
}

bool to_sockaddr(const std::string& text, std::uint16_t port, sockaddr_storage& out) {
  std::memset(&out, 0, sizeof out);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out);
  if (::inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out);
  if (::inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    return true;
  }
  return false;
}

struct resolve_req {
  uv_getaddrinfo_t req{};
  egress_relay* relay = nullptr;
  connection_id conn = 0;
};

} // namespace

egress_relay::egress_relay(uv_loop_t* loop, egress_limits limits) : loop_(loop), limits_(limits) {}

// The loop has stopped and closed every handle by now (io_loop's run); only memory is left.
egress_relay::~egress_relay() {
  for (auto& [id, c] : connections_) delete c;
}

void egress_relay::set_decider(process_id process, caf::actor decider) {
  if (decider) deciders_[process] = std::move(decider);
}

uv_tcp_t* egress_relay::new_listener(process_id process, listener_kind kind) {
  auto l = std::make_unique<listener>();
  l->relay = this;
  l->process = process;
  l->kind = kind;
  uv_tcp_init(loop_, &l->handle);
  l->handle.data = l.get();
  auto* h = &l->handle;
  listeners_[h] = std::move(l);
  return h;
}

void egress_relay::drop_listener(uv_tcp_t* h) {
  if (!listeners_.count(h)) return;
  uv_close(handle(*h), [](uv_handle_t* hh) {
    auto* l = static_cast<listener*>(hh->data);
    l->relay->listeners_.erase(&l->handle);
  });
}

void egress_relay::start_listener(uv_tcp_t* h) {
  auto* l = static_cast<listener*>(h->data);
  // No decider: the execution has no allow-list, so nothing may pass. Closing the socket
  // makes every connect inside the jail fail at once.
  if (!deciders_.count(l->process)) return drop_listener(h);
  // The loop accepts until EAGAIN: a blocking listener (whatever the sender set) would
  // stall every execution's I/O.
  uv_os_fd_t fd = -1;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(h), &fd) != 0 || ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
    return drop_listener(h);
  int rc = uv_listen(reinterpret_cast<uv_stream_t*>(h), 128, [](uv_stream_t* s, int status) {
    auto* ll = static_cast<listener*>(s->data);
    if (status == 0) ll->relay->on_accept(ll);
  });
  if (rc < 0) drop_listener(h);
}

void egress_relay::close_process(process_id process) {
  for (auto& [h, l] : listeners_)
    if (l->process == process && !uv_is_closing(handle(*h))) drop_listener(h);
  std::vector<conn*> doomed;
  for (auto& [id, c] : connections_)
    if (c->process == process) doomed.push_back(c);
  // Each reports its end to the decider now, before the owner hears of the exit.
  for (auto* c : doomed) close_connection(c, "the execution ended");
  deciders_.erase(process);
}

std::size_t egress_relay::open_connections(process_id process) const {
  auto it = open_per_process_.find(process);
  return it == open_per_process_.end() ? 0 : it->second;
}

void egress_relay::on_accept(listener* l) {
  auto* c = new conn;
  c->relay = this;
  c->id = next_conn_++;
  c->process = l->process;
  c->kind = l->kind;
  c->idle_timeout = limits_.idle_timeout;
  c->protocol = l->kind == listener_kind::socks5 ? egress_protocol::socks5 : egress_protocol::http_connect;
  c->phase = l->kind == listener_kind::socks5 ? connection_phase::greeting : connection_phase::request;
  uv_tcp_init(loop_, &c->client);
  uv_timer_init(loop_, &c->timer);
  c->client.data = c;
  c->timer.data = c;
  c->open_handles = 2;
  connections_[c->id] = c;
  ++open_per_process_[c->process];
  if (uv_accept(reinterpret_cast<uv_stream_t*>(&l->handle), reinterpret_cast<uv_stream_t*>(&c->client)) < 0)
    return close_connection(c, "accept failed");
  uv_tcp_nodelay(&c->client, 1);
  if (open_connections(c->process) > limits_.max_connections) {
    c->failure = "the execution's connection cap (" + std::to_string(limits_.max_connections) + ") is reached";
    if (c->kind == listener_kind::socks5) return close_connection(c, c->failure);
    return send_bytes(c, true, proxy_response(503, "Service Unavailable", "corral egress: " + c->failure + "\n"), true);
  }
  touch(c);
  read_client(c, true);
}

void egress_relay::on_client_bytes(conn* c) {
  if (c->phase == connection_phase::greeting) {
    auto g = parse_socks_greeting(c->inbox);
    if (g.step == socks_step::incomplete) return;
    if (g.step == socks_step::refused) {
      c->failure = "not a SOCKS5 greeting offering no authentication";
      return g.answer.empty() ? drain(c) : send_bytes(c, true, g.answer, true);
    }
    c->inbox.erase(0, g.length);
    send_bytes(c, true, g.answer);
    c->phase = connection_phase::request;
  }
  if (c->phase == connection_phase::request && c->kind == listener_kind::socks5) {
    auto r = parse_socks_request(c->inbox);
    if (r.step == socks_step::incomplete) return;
    if (r.step == socks_step::refused) {
      c->failure = "SOCKS5: " + r.error;
      return send_bytes(c, true, socks_answer(r.refusal), true);
    }
    c->inbox.erase(0, r.length);
    c->host = r.host;
    c->port = r.port;
    return ask(c);
  }
  if (c->phase == connection_phase::request) {
    auto h = parse_proxy_head(c->inbox);
    if (h.status == head_status::incomplete) return;
    if (h.status == head_status::too_large) {
      c->failure = "the request head is larger than " + std::to_string(kMaxProxyHead) + " bytes";
      return send_bytes(c, true, proxy_response(431, "Request Header Fields Too Large", "corral egress: " + c->failure + "\n"), true);
    }
    if (h.status == head_status::malformed) {
      c->failure = "malformed request: " + h.error;
      return send_bytes(c, true, proxy_response(400, "Bad Request", "corral egress: " + h.error + "\n"), true);
    }
    c->inbox.erase(0, h.length);
    c->protocol = h.tunnel ? egress_protocol::http_connect : egress_protocol::http_forward;
    c->host = h.host;
    c->port = h.port;
    c->forward_head = std::move(h.upstream);
    return ask(c);
  }
  if (c->phase == connection_phase::hello) {
    auto hello = peek_client_hello(c->inbox);
    if (hello.status == hello_status::incomplete) {
      if (c->inbox.size() > kMaxHelloPeek) close_connection(c, "the TLS ClientHello is larger than one record");
      return;
    }
    if (hello.status == hello_status::malformed) return close_connection(c, "malformed TLS ClientHello");
    if (hello.status == hello_status::sni && hello.name != normalized_host_name(c->host))
      return close_connection(c, "sni_mismatch: the ClientHello names " + hello.name + ", the tunnel was opened for " + c->host);
    return start_relay(c);
  }
}

void egress_relay::on_client_eof(conn* c) {
  // A tunnel's program that sent nothing and shut its side (it only listens) has no
  // ClientHello to hold: relay, so the destination's bytes still reach it. Anything else
  // (an unfinished head, an unfinished ClientHello) ends here.
  if (c->phase != connection_phase::hello || !c->inbox.empty()) return close_connection(c, c->failure);
  c->client_eof = true;  // so start_relay does not read the program's ended side again
  start_relay(c);
  on_peer_eof(c, true);
}

void egress_relay::ask(conn* c) {
  c->phase = connection_phase::asking;
  read_client(c, false);
  auto it = deciders_.find(c->process);
  if (it == deciders_.end()) return close_connection(c, "no decider");
  caf::anon_send(it->second, egress_ask{c->id, c->process, c->protocol, c->host, c->port, false, {}, {}});
}

void egress_relay::on_answer(const egress_answer& a) {
  auto it = connections_.find(a.conn);
  if (it == connections_.end() || it->second->phase != connection_phase::asking) return;  // gone meanwhile
  conn* c = it->second;
  switch (a.next) {
    case egress_next::refuse: return refuse(c, a.verdict, "");
    case egress_next::resolve: return resolve(c);
    case egress_next::connect:
      c->targets = a.addresses;
      c->next_target = 0;
      if (a.idle_timeout.count() > 0) c->idle_timeout = std::min(c->idle_timeout, a.idle_timeout);
      c->phase = connection_phase::connecting;
      return connect_next(c);
  }
}

void egress_relay::resolve(conn* c) {
  auto* r = new resolve_req;
  r->relay = this;
  r->conn = c->id;
  r->req.data = r;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  int rc = uv_getaddrinfo(loop_, &r->req, [](uv_getaddrinfo_t* req, int status, addrinfo* res) {
    auto* rr = static_cast<resolve_req*>(req->data);
    auto* relay = rr->relay;
    egress_ask again;
    again.conn = rr->conn;
    again.resolved = true;
    for (auto* ai = res; status == 0 && ai; ai = ai->ai_next) {
      char text[INET6_ADDRSTRLEN] = {};
      const void* src = ai->ai_family == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_addr)
                                                 : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr);
      if (::inet_ntop(ai->ai_family, src, text, sizeof text)) again.addresses.push_back(text);
    }
    if (status != 0) again.resolve_error = uv_strerror(status);
    uv_freeaddrinfo(res);
    delete rr;
    auto it = relay->connections_.find(again.conn);
    if (it == relay->connections_.end() || it->second->phase != connection_phase::asking) return;
    conn* cc = it->second;
    auto d = relay->deciders_.find(cc->process);
    if (d == relay->deciders_.end()) return close_connection(cc, "no decider");
    again.process = cc->process;
    again.protocol = cc->protocol;
    again.host = cc->host;
    again.port = cc->port;
    caf::anon_send(d->second, std::move(again));
  }, c->host.c_str(), nullptr, &hints);
  if (rc < 0) {
    delete r;
    refuse(c, {egress_outcome::unresolved, "", c->host + " could not be resolved: " + uv_strerror(rc)}, "");
  }
}

void egress_relay::connect_next(conn* c) {
  sockaddr_storage addr{};
  while (c->next_target < c->targets.size() && !to_sockaddr(c->targets[c->next_target], c->port, addr)) ++c->next_target;
  if (c->next_target >= c->targets.size())
    return refuse(c, {}, c->failure.empty() ? "connect: no address to connect to" : c->failure);
  c->connected_to = c->targets[c->next_target++];
  uv_tcp_init(loop_, &c->upstream);
  c->upstream.data = c;
  c->upstream_live = true;
  ++c->open_handles;
  c->connect_req.data = c;
  int rc = uv_tcp_connect(&c->connect_req, &c->upstream, reinterpret_cast<sockaddr*>(&addr), [](uv_connect_t* req, int status) {
    auto* cc = static_cast<conn*>(req->data);
    if (cc->phase == connection_phase::closing) return;
    if (status == 0) return cc->relay->on_connected(cc);
    cc->failure = "connect to " + cc->connected_to + ": " + uv_strerror(status);
    cc->connected_to.clear();
    // This address failed: close its handle, then try the next checked one.
    cc->upstream_live = false;
    uv_close(reinterpret_cast<uv_handle_t*>(&cc->upstream), [](uv_handle_t* h) {
      auto* c3 = static_cast<conn*>(h->data);
      --c3->open_handles;
      if (c3->phase == connection_phase::closing) {
        if (c3->open_handles == 0) c3->relay->forget(c3);
        return;
      }
      c3->relay->connect_next(c3);
    });
  });
  if (rc < 0) {
    c->failure = "connect to " + c->connected_to + ": " + uv_strerror(rc);
    close_connection(c, c->failure);
  }
}

void egress_relay::on_connected(conn* c) {
  c->failure.clear();  // an earlier address's failure no longer applies
  uv_tcp_nodelay(&c->upstream, 1);
  bool literal = parse_ip_address(c->host).has_value();
  switch (c->protocol) {
    case egress_protocol::http_forward:
      send_bytes(c, false, std::move(c->forward_head));
      return start_relay(c);
    case egress_protocol::http_connect:
      send_bytes(c, true, "HTTP/1.1 200 Connection established\r\n\r\n");
      break;
    case egress_protocol::socks5:
      send_bytes(c, true, socks_answer(socks_reply::succeeded));
      break;
  }
  if (literal) return start_relay(c);
  // The program's first bytes are held until they show whether they are a ClientHello
  // (and which name it asks for); the destination's flow on at once, so a protocol in
  // which the server speaks first is not stalled.
  c->phase = connection_phase::hello;
  touch(c);
  read_upstream(c, true);
  read_client(c, true);
  on_client_bytes(c);  // bytes the program sent early
}

void egress_relay::start_relay(conn* c) {
  c->phase = connection_phase::relaying;
  c->up += c->inbox.size();
  send_bytes(c, false, std::move(c->inbox));
  c->inbox.clear();
  touch(c);
  read_client(c, true);
  read_upstream(c, true);
}

void egress_relay::refuse(conn* c, const egress_verdict& v, std::string failure) {
  c->failure = failure.empty() ? v.reason : failure;
  if (c->kind == listener_kind::socks5) return send_bytes(c, true, socks_answer(socks_code(v, failure)), true);
  send_bytes(c, true, http_refusal(v, failure), true);
}

void egress_relay::report_closed(conn* c) {
  if (auto d = deciders_.find(c->process); d != deciders_.end())
    caf::anon_send(d->second, egress_closed{c->id, c->up, c->down, c->connected_to, c->failure});
}

namespace {
constexpr std::size_t kSpareBlocks = 64;  // 4 MiB idle at most, for the whole runtime
}

std::unique_ptr<char[]> egress_relay::take_block() {
  if (spare_blocks_.empty()) return std::make_unique_for_overwrite<char[]>(kReadBuffer);
  auto b = std::move(spare_blocks_.back());
  spare_blocks_.pop_back();
  return b;
}

void egress_relay::give_back(std::unique_ptr<char[]> block) {
  if (block && spare_blocks_.size() < kSpareBlocks) spare_blocks_.push_back(std::move(block));
}

void egress_relay::forget(conn* c) {
  if (auto n = open_per_process_.find(c->process); n != open_per_process_.end() && --n->second == 0)
    open_per_process_.erase(n);
  connections_.erase(c->id);
  delete c;
}

} // namespace corral
