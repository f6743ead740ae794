#include "proto/e2b/sandbox_record.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "config/replace_file.hpp"
#include "tiers/workspace/workspace_record.hpp"

namespace corral {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string records_dir(const std::string& e2b_dir) { return e2b_dir + "/sandboxes"; }

} // namespace

status write_sandbox_record(const std::string& e2b_dir, const sandbox_record& r) {
  for (auto& d : {e2b_dir, records_dir(e2b_dir)})
    if (::mkdir(d.c_str(), 0700) < 0 && errno != EEXIST)
      return make_failure(failure_kind::internal, "mkdir " + d + ": " + std::strerror(errno));
  json j = {{"version", 1},           {"id", r.id},
            {"key", r.key},           {"template", r.template_id},
            {"metadata", r.metadata}, {"env_vars", r.env_vars},
            {"access_token", r.access_token}, {"started_at_ms", r.started_at_ms},
            {"end_at_ms", r.end_at_ms}};
  auto path = records_dir(e2b_dir) + "/" + r.id + ".json";
  if (!replace_file(path, path + ".tmp-" + std::to_string(::getpid()), j.dump() + "\n", false))
    return make_failure(failure_kind::internal, "writing " + path + ": " + std::strerror(errno));
  return ok();
}

void remove_sandbox_record(const std::string& e2b_dir, const std::string& id) {
  if (!valid_workspace_id(id)) return;
  ::unlink((records_dir(e2b_dir) + "/" + id + ".json").c_str());
}

std::vector<sandbox_record> read_sandbox_records(const std::string& e2b_dir, std::vector<std::string>& problems) {
  std::vector<sandbox_record> out;
  std::error_code ec;
  for (auto& entry : fs::directory_iterator(records_dir(e2b_dir), ec)) {
    auto path = entry.path().string();
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    try {
      auto j = json::parse(text.str());
      sandbox_record r;
      r.id = j.at("id").get<std::string>();
      r.key = j.at("key").get<std::string>();
      r.template_id = j.value("template", std::string("base"));
      r.metadata = j.value("metadata", std::map<std::string, std::string>{});
      r.env_vars = j.value("env_vars", std::map<std::string, std::string>{});
      r.access_token = j.at("access_token").get<std::string>();
      r.started_at_ms = j.value("started_at_ms", std::int64_t{0});
      r.end_at_ms = j.value("end_at_ms", std::int64_t{0});
      if (!valid_workspace_id(r.id) || entry.path().stem() != r.id) throw std::runtime_error("the id is not its name");
      out.push_back(std::move(r));
    } catch (const std::exception& e) {
      problems.push_back(path + ": " + e.what());
    }
  }
  return out;
}

} // namespace corral
