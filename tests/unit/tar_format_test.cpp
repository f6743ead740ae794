// The snapshot archive's tar layer: what it writes reads back exactly, and what a snapshot
// never holds (or a damaged header) is refused, naming why.
#include <catch2/catch.hpp>

#include <cstring>

#include "tiers/workspace/tar_format.hpp"

using namespace corral;

namespace {

// An archive held in memory, read as the extractor reads one.
struct memory_source {
  std::string bytes;
  std::size_t at = 0;
  tar_source source() {
    return [this](char* out, std::size_t n) -> status {
      if (bytes.size() - at < n) return make_failure(failure_kind::invalid_request, "short");
      std::memcpy(out, bytes.data() + at, n);
      at += n;
      return ok();
    };
  }
};

tar_entry file_entry(std::string path, std::uint64_t size, std::int64_t mtime_ns = 1'700'000'000'123'456'789) {
  tar_entry e;
  e.path = std::move(path);
  e.mode = 0640;
  e.size = size;
  e.mtime_ns = mtime_ns;
  return e;
}

std::string archive_of(const std::vector<std::pair<tar_entry, std::string>>& items) {
  std::string out;
  for (auto& [e, data] : items) {
    out += tar_header(e);
    out += data;
    out += tar_padding(data.size());
  }
  return out + tar_end();
}

} // namespace

TEST_CASE("tar entries read back exactly: long paths, symlinks, directories, nanosecond and negative times", "[snapshot]") {
  std::string long_path(300, 'a');
  long_path[150] = '/';
  tar_entry dir;
  dir.type = tar_entry::kind::dir;
  dir.path = "d";
  dir.mode = 01755;
  dir.mtime_ns = -1'500'000'000;
  tar_entry link;
  link.type = tar_entry::kind::symlink;
  link.path = "d/link";
  link.link_target = std::string(200, 'x') + "/../../etc/passwd";
  link.mode = 0777;
  auto big = file_entry(long_path, 5);
  memory_source in{archive_of({{dir, ""}, {big, "hello"}, {link, ""}, {file_entry("empty", 0), ""}})};
  auto src = in.source();

  auto d = read_tar_header(src);
  REQUIRE(d);
  REQUIRE(*d);
  CHECK((*d)->type == tar_entry::kind::dir);
  CHECK((*d)->path == "d");
  CHECK((*d)->mode == 01755);
  CHECK((*d)->mtime_ns == -1'500'000'000);

  auto f = read_tar_header(src);
  REQUIRE(f);
  REQUIRE(*f);
  CHECK((*f)->path == long_path);
  CHECK((*f)->size == 5);
  CHECK((*f)->mtime_ns == 1'700'000'000'123'456'789);
  std::string data(5, '\0');
  REQUIRE(src(data.data(), 5));
  CHECK(data == "hello");
  std::string pad = tar_padding(5);
  REQUIRE(src(pad.data(), pad.size()));

  auto l = read_tar_header(src);
  REQUIRE(l);
  REQUIRE(*l);
  CHECK((*l)->type == tar_entry::kind::symlink);
  CHECK((*l)->link_target == link.link_target);

  auto e = read_tar_header(src);
  REQUIRE(e);
  REQUIRE(*e);
  CHECK((*e)->size == 0);
  auto end = read_tar_header(src);
  REQUIRE(end);
  CHECK(!*end);
  CHECK(in.at == in.bytes.size());
}

TEST_CASE("tar headers that climb, are absolute, are damaged or are not a snapshot's types are refused", "[snapshot]") {
  auto refused = [](std::string bytes, const std::string& words) {
    memory_source in{std::move(bytes)};
    auto src = in.source();
    auto h = read_tar_header(src);
    REQUIRE(!h);
    INFO(h.error().message);
    CHECK(h.error().message.find(words) != std::string::npos);
  };
  refused(archive_of({{file_entry("../outside", 0), ""}}), "'..'");
  refused(archive_of({{file_entry("a/../../b", 0), ""}}), "'..'");
  refused(archive_of({{file_entry("/etc/passwd", 0), ""}}), "absolute");
  refused(archive_of({{file_entry("a//b", 0), ""}}), "empty");

  // One flipped byte in the header: the checksum catches it.
  auto damaged = archive_of({{file_entry("a", 0), ""}});
  damaged[kTarBlock * 2 + 10] ^= 1;  // the ustar header's name, after the pax header and its records
  refused(damaged, "checksum");

  // A hardlink (type '1') written by another tool, with a valid checksum.
  auto hardlink = tar_header(file_entry("h", 0));
  auto ustar = hardlink.size() - kTarBlock;
  hardlink[ustar + 156] = '1';
  unsigned sum = 0;
  for (std::size_t i = 0; i < kTarBlock; ++i)
    sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(hardlink[ustar + i]);
  std::snprintf(&hardlink[ustar + 148], 8, "%06o", sum);
  refused(hardlink + tar_end(), "entry type '1'");

  // Cut short: the reader says so instead of reading past the end.
  auto whole = archive_of({{file_entry("a", 0), ""}});
  refused(whole.substr(0, kTarBlock + 10), "short");
}
