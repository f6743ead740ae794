// proto/http/multipart: multipart/form-data bodies, as E2B's file upload sends them.
#include <catch2/catch.hpp>

#include "proto/http/multipart.hpp"

using namespace corral;

TEST_CASE("multipart_boundary reads a quoted or bare boundary", "[unit][http]") {
  CHECK(*multipart_boundary("multipart/form-data; boundary=abc123") == "abc123");
  CHECK(*multipart_boundary("Multipart/Form-Data; charset=utf-8; boundary=\"a b;c\"") == "a b;c");
  auto missing = multipart_boundary("multipart/form-data");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("no boundary") != std::string::npos);
  CHECK_FALSE(multipart_boundary("application/json"));
  CHECK_FALSE(multipart_boundary("multipart/form-data; boundary=\"unterminated"));
  CHECK_FALSE(multipart_boundary("multipart/form-data; boundary=" + std::string(71, 'b')));
}

TEST_CASE("parse_multipart reads parts, names, filenames and data", "[unit][http]") {
  std::string body =
      "preamble to ignore\r\n"
      "--XyZ\r\n"
      "Content-Disposition: form-data; name=\"file\"; filename=\"dir/a \\\"q\\\".txt\"\r\n"
      "Content-Type: application/octet-stream\r\n"
      "\r\n"
      "line one\r\n--XyZnot a delimiter\r\nend"
      "\r\n--XyZ  \r\n"
      "content-disposition: form-data; name=field; filename*=UTF-8''na%C3%AFve.txt\r\n"
      "\r\n"
      "\r\n--XyZ--\r\n"
      "epilogue";
  auto parts = parse_multipart("multipart/form-data; boundary=XyZ", body);
  REQUIRE(parts);
  REQUIRE(parts->size() == 2);
  auto& file = (*parts)[0];
  CHECK(file.name == "file");
  CHECK(file.filename == std::optional<std::string>("dir/a \"q\".txt"));
  CHECK(file.data == "line one\r\n--XyZnot a delimiter\r\nend");
  REQUIRE(file.header("content-type"));
  CHECK(*file.header("content-type") == "application/octet-stream");
  auto& field = (*parts)[1];
  CHECK(field.name == "field");
  CHECK(field.filename == std::optional<std::string>("na\xC3\xAFve.txt"));
  CHECK(field.data.empty());
}

TEST_CASE("parse_multipart refuses bodies it cannot frame", "[unit][http]") {
  const std::string type = "multipart/form-data; boundary=b";
  auto no_delimiter = parse_multipart(type, "just text");
  REQUIRE_FALSE(no_delimiter);
  CHECK(no_delimiter.error().message.find("no line '--b'") != std::string::npos);
  auto unterminated = parse_multipart(type, "--b\r\nContent-Disposition: form-data; name=x\r\n\r\ndata without end");
  REQUIRE_FALSE(unterminated);
  CHECK(unterminated.error().message.find("not ended") != std::string::npos);
  auto no_blank = parse_multipart(type, "--b\r\nContent-Disposition: form-data; name=x\r\n");
  REQUIRE_FALSE(no_blank);
  CHECK(no_blank.error().message.find("never end") != std::string::npos);
  auto no_name = parse_multipart(type, "--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--");
  REQUIRE_FALSE(no_name);
  CHECK(no_name.error().message.find("with a name") != std::string::npos);
  auto no_disposition = parse_multipart(type, "--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--");
  REQUIRE_FALSE(no_disposition);
  auto empty = parse_multipart(type, "--b--\r\n");
  REQUIRE(empty);
  CHECK(empty->empty());
}
