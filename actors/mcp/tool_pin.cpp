#include "actors/mcp/tool_pin.hpp"

#include <fstream>
#include <sstream>

#include "config/mcp_policy.hpp"
#include "config/sha256.hpp"

namespace corral {

namespace {

const char* const kDefinitionFields[] = {"name", "title", "description", "inputSchema", "outputSchema", "annotations"};

nlohmann::json definition_of(const nlohmann::json& tool) {
  nlohmann::json d = nlohmann::json::object();
  for (const char* f : kDefinitionFields)
    if (auto it = tool.find(f); it != tool.end()) d[f] = *it;
  return d;
}

} // namespace

std::string canonical_tool(const nlohmann::json& tool) {
  if (!tool.is_object()) return {};
  auto name = tool.find("name");
  if (name == tool.end() || !name->is_string()) return {};
  // nlohmann's object is a std::map: dump() writes keys sorted, compact, UTF-8 unescaped.
  return definition_of(tool).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void add_tools(const nlohmann::json& tools, tool_definitions& into) {
  if (!tools.is_array()) return;
  for (const auto& t : tools)
    if (auto c = canonical_tool(t); !c.empty()) into[t["name"].get<std::string>()] = std::move(c);
}

std::string pin_digest(const tool_definitions& tools) {
  std::string all = "[";
  for (const auto& [name, def] : tools) all += (all.size() > 1 ? "," : "") + def;
  all += "]";
  return "sha256:" + sha256_hex(all);
}

std::string pin_file_text(const tool_definitions& tools) {
  nlohmann::json doc;
  doc["pin"] = pin_digest(tools);
  doc["tools"] = nlohmann::json::array();
  for (const auto& [name, def] : tools) doc["tools"].push_back(nlohmann::json::parse(def));
  return doc.dump(2) + "\n";
}

expected<tool_definitions> read_pin_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_failure(failure_kind::config_error, "mcp.pin_file " + path + " cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  auto doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("tools") || !doc["tools"].is_array())
    return make_failure(failure_kind::config_error,
                        "mcp.pin_file " + path + " is not a pin file (corral mcp --write-pin FILE writes one)");
  tool_definitions defs;
  add_tools(doc["tools"], defs);
  if (defs.size() != doc["tools"].size())
    return make_failure(failure_kind::config_error, "mcp.pin_file " + path + ": every tool needs a string name");
  if (auto pin = doc.find("pin"); pin != doc.end() && (!pin->is_string() || *pin != pin_digest(defs)))
    return make_failure(failure_kind::config_error,
                        "mcp.pin_file " + path + ": its pin does not match its tools (edited by hand?)");
  return defs;
}

std::string tool_changes::summary() const {
  std::string s;
  auto part = [&](const char* what, const std::vector<std::string>& items) {
    if (!items.empty()) s += (s.empty() ? "" : "; ") + std::string(what) + ": " + join_list(items);
  };
  part("changed", changed);
  part("added", added);
  part("removed", removed);
  return s;
}

tool_changes diff_tools(const tool_definitions& pinned, const tool_definitions& now) {
  tool_changes c;
  for (const auto& [name, def] : now) {
    auto it = pinned.find(name);
    if (it == pinned.end()) {
      c.added.push_back(name);
      continue;
    }
    if (it->second == def) continue;
    auto was = nlohmann::json::parse(it->second, nullptr, false);
    auto is = nlohmann::json::parse(def, nullptr, false);
    std::vector<std::string> fields;
    for (const char* f : kDefinitionFields)
      if (was.value(f, nlohmann::json()) != is.value(f, nlohmann::json())) fields.push_back(f);
    c.changed.push_back(name + " (" + join_list(fields) + ")");
  }
  for (const auto& [name, def] : pinned)
    if (!now.count(name)) c.removed.push_back(name);
  return c;
}

} // namespace corral
