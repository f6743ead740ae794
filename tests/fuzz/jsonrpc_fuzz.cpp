// libFuzzer target for the daemon's framing: arbitrary bytes through the line splitter,
// each line through the request parser and, for exec, the params decoder. Nothing may
// crash, and whatever is accepted must serialise again.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proto/jsonrpc/exec_params.hpp"
#include "proto/jsonrpc/jsonrpc.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  corral::rpc::line_splitter splitter(4096);
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto pieces = splitter.feed(bytes.substr(0, size / 2));
  auto rest = splitter.feed(bytes.substr(size / 2));
  pieces.insert(pieces.end(), rest.begin(), rest.end());
  pieces.push_back({false, std::string(bytes)});  // the whole input as one line too
  for (auto& p : pieces) {
    if (p.oversized) continue;
    auto parsed = corral::rpc::parse_request(p.line);
    if (auto* e = std::get_if<corral::rpc::error>(&parsed)) {
      (void)corral::rpc::error_line(*e);
      continue;
    }
    auto& r = std::get<corral::rpc::request>(parsed);
    (void)corral::rpc::response_line(r.id, r.params);
    if (r.method == "exec") (void)corral::exec_params_from_json(r.params);
  }
  return 0;
}
