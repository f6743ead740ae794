// The microvm tier's wire formats alone: guest protocol frames, the launcher's command line
// and the tree reader's bounds. No VM and no VMM is started.
#include <catch2/catch.hpp>

#include "tests/microvm_fixture.hpp"
#include "tiers/microvm/guest_protocol.hpp"

using namespace corral;
using namespace corral::testing;
using namespace corral::testing::microvm;
using namespace std::chrono_literals;

TEST_CASE("guest protocol frames survive any bytes and reject corrupt lengths", "[microvm][protocol]") {
  guest_request r;
  r.argv = {"/bin/sh", "-c", std::string("a\0b\xff", 4)};
  r.envp = {"A=1"};
  r.cwd = "/work";
  r.timeout_ms = 1234;
  r.memory_bytes = 64 * kMiB;
  r.trees = {{"/work", true}, {"/src", false}};
  r.files = {{0, "main.py", entry_kind::file, 0600, 0, std::string(5000, '\n')},
             {1, "lib", entry_kind::directory, 0755, 0, {}},
             {1, "lib/link", entry_kind::symlink, 0777, 0, "../main.py"}};
  frame_reader in;
  auto bytes = encode_frame(frame_type::request, encode_request(r)) + encode_frame(frame_type::input_end, "");
  in.feed(bytes.data(), 3);  // a partial header is not a frame yet
  auto none = in.next();
  REQUIRE(none);
  CHECK_FALSE(*none);
  in.feed(bytes.data() + 3, bytes.size() - 3);
  auto f = in.next();
  REQUIRE(f);
  REQUIRE(*f);
  auto back = decode_request((*f)->payload);
  REQUIRE(back);
  CHECK(back->argv == r.argv);
  CHECK(back->files.at(0).content == r.files[0].content);
  REQUIRE(back->trees.size() == 2);
  CHECK_FALSE(back->trees[1].writable);
  CHECK(back->files.at(2).path == "lib/link");
  CHECK(back->files.at(2).kind == entry_kind::symlink);
  CHECK(back->files.at(2).content == "../main.py");
  CHECK(back->memory_bytes == r.memory_bytes);
  auto end = in.next();
  REQUIRE(end);
  REQUIRE(*end);
  CHECK((*end)->type == frame_type::input_end);

  frame_reader bad;
  std::string huge = "O\xff\xff\xff\x7f";
  bad.feed(huge.data(), huge.size());
  CHECK_FALSE(bad.next());
  CHECK_FALSE(decode_request(std::string("\x05\x00\x00\x00", 4)));  // 5 strings announced, none there

  // The agent refuses a request whose trees or entries would leave their place.
  for (std::string evil : std::vector<std::string>{"../x", "a/../../x", "/etc/passwd", "a//b", "./a", "", std::string("a\0b", 3)}) {
    INFO(evil);
    CHECK_FALSE(safe_relative_path(evil));
    auto bad_entry = r;
    bad_entry.files[0].path = evil;
    CHECK_FALSE(decode_request(encode_request(bad_entry)));
  }
  for (std::string evil : {"/", "work", "/work/..", "/a/./b", "//x"}) {
    INFO(evil);
    auto bad_tree = r;
    bad_tree.trees[0].path = evil;
    CHECK_FALSE(decode_request(encode_request(bad_tree)));
  }
  auto bad_index = r;
  bad_index.files[0].tree = 7;
  CHECK_FALSE(decode_request(encode_request(bad_index)));
  CHECK(safe_relative_path("a/b.c/..d"));

  guest_file chunk{1, "dir/f", entry_kind::file, 0640, 1u << 20, "bytes"};
  auto file_back = decode_file(encode_file(chunk));
  REQUIRE(file_back);
  CHECK(file_back->offset == chunk.offset);
  CHECK(file_back->path == chunk.path);
  CHECK_FALSE(decode_file(encode_file(chunk).substr(3)));
}

TEST_CASE("the launcher's command line round-trips and refuses what it does not know", "[microvm][protocol]") {
  vm_options o;
  o.vmm = "/usr/bin/qemu-system-x86_64";
  o.kernel = "/img/vmlinux";
  o.initrd = "/img/initramfs.cpio";
  o.vm_memory_mib = vm_memory_for(64 * kMiB);
  o.vcpus = 2;
  o.timeout_ms = 5000;
  o.request.argv = {"/bin/sh", "-c", "echo --vmm"};  // after --, flags are the program's
  o.request.cwd = "/work";
  o.request.memory_bytes = 64 * kMiB;
  o.request.cpu_millicores = 1500;
  auto back = parse_vm_options(to_launcher_args(o));
  REQUIRE(back);
  CHECK(back->request.argv == o.request.argv);
  CHECK(back->vm_memory_mib == 160);  // the limit plus the guest's own 96 MiB
  CHECK(back->request.cpu_millicores == 1500);
  CHECK(back->request.envp.empty());  // the environment never rides on the command line
  CHECK_FALSE(parse_vm_options({"--bogus", "1", "--", "/bin/true"}));
  CHECK_FALSE(parse_vm_options({"--vmm", "relative/qemu", "--kernel", "/k", "--initrd", "/i", "--cwd", "/w", "--", "x"}));
  CHECK_FALSE(parse_vm_options({"--vmm", "/q", "--kernel", "/k", "--initrd", "/i", "--cwd", "/w"}));  // no program
  CHECK_FALSE(parse_vm_options({"--vmm", "/q", "--kernel", "/k", "--initrd", "/i", "--cwd", "/w", "--pids", "x1", "--", "x"}));

  o.trees = {{"/host/scratch", "/work", true}, {"/host/with:colon", "/src", false}};
  auto with_trees = parse_vm_options(to_launcher_args(o));
  REQUIRE(with_trees);
  REQUIRE(with_trees->trees.size() == 2);
  CHECK(with_trees->trees[1].host == "/host/with:colon");
  CHECK(with_trees->trees[1].guest == "/src");
  CHECK_FALSE(with_trees->trees[1].writable);
  for (std::string bad : {"rx:/a:/b", "rw:/a", "rw:a:/b", "rw:/a:b", "ro:/../a:/b"}) {
    INFO(bad);
    CHECK_FALSE(parse_vm_options({"--vmm", "/q", "--kernel", "/k", "--initrd", "/i", "--cwd", "/w", "--tree", bad, "--", "x"}));
  }
}

TEST_CASE("the launcher reads a tree within its bounds", "[microvm][protocol]") {
  temp_dir src;
  ::mkdir((src / "sub").c_str(), 0750);
  std::ofstream(src / "sub/a.txt") << "alpha";
  ::symlink("sub/a.txt", (src / "link").c_str());
  ::mkfifo((src / "fifo").c_str(), 0600);  // nothing a copy can hold: left out
  guest_request r;
  REQUIRE(read_trees({{src.path(), "/src", false}}, r));
  REQUIRE(r.files.size() == 3);
  CHECK(r.files[0].path == "link");
  CHECK(r.files[0].kind == entry_kind::symlink);
  CHECK(r.files[0].content == "sub/a.txt");
  CHECK(r.files[1].path == "sub");
  CHECK(r.files[1].mode == 0750);
  CHECK(r.files[2].path == "sub/a.txt");
  CHECK(r.files[2].content == "alpha");

  SECTION("a tree over the bound is refused with what to do") {
    std::ofstream(src / "big", std::ios::binary) << std::string(kMaxTreeBytes + 1, 'x');
    auto big = read_trees({{src.path(), "/src", false}}, r);
    REQUIRE_FALSE(big);
    CHECK(big.error().kind == failure_kind::limit_exceeded);
    CHECK(big.error().message.find("grant a smaller root") != std::string::npos);
  }
  SECTION("a missing root is an error") {
    CHECK_FALSE(read_trees({{src / "nope", "/src", false}}, r));
  }
}
