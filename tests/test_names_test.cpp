// The test command runs every case through ctest, which registers each by its name
// (catch_discover_tests) and runs `corral_tests "<name>"` (or corral_unit_tests). A name ctest or Catch's filter
// reads otherwise registers a case that matches nothing and "passes" without running: a
// ';' splits it in two (CMake's list separator; nine daemon, node and terminal cases were
// lost this way), and a leading '-', '~' or a '*' or '[' is read as an option, an
// exclusion, a wildcard (at either end) or a tag.
#include <catch2/catch.hpp>

#include <string>

TEST_CASE("every test case name survives ctest's discovery and Catch's filter", "[meta]") {
  const auto& all = Catch::getRegistryHub().getTestCaseRegistry().getAllTests();
  REQUIRE(all.size() >= CORRAL_TEST_MIN_CASES);  // the registry really is this program's suite
  for (const auto& test : all) {
    const std::string& name = test.getTestCaseInfo().name;
    INFO(name);
    CHECK(name.find(';') == std::string::npos);
    CHECK(name.find('[') == std::string::npos);
    CHECK(name.find('"') == std::string::npos);
    CHECK(name.find('\\') == std::string::npos);
    REQUIRE_FALSE(name.empty());
    CHECK(name.front() != '-');
    CHECK(name.front() != '~');
    CHECK(name.front() != ' ');
    CHECK(name.front() != '*');  // a wildcard only at either end; "session.*" inside is literal
    CHECK(name.back() != '*');
  }
}
