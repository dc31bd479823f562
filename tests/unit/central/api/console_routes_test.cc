#include "central/api/console_routes.h"

#include <catch2/catch.hpp>
#include <fstream>

#include "tests/unit/temp_dir.h"

namespace meshwork::central {
namespace {

void Write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

TEST_CASE("M-7 the console's files are loaded once with their content types, dot files skipped") {
  TempDir dir("console");
  Write(dir.path() / "index.html", "<!doctype html>");
  Write(dir.path() / "console.js", "'use strict';");
  Write(dir.path() / "vendor" / "hls.min.js", "var Hls;");
  Write(dir.path() / ".built", "");
  Write(dir.path() / ".git" / "config", "secret");
  auto console = LoadConsole(dir.path().string());
  REQUIRE(console.ok());
  const auto& files = (*console)->files;
  CHECK(files.size() == 3);
  REQUIRE(files.contains("index.html"));
  CHECK(files.at("index.html").content_type == "text/html; charset=utf-8");
  CHECK(*files.at("index.html").body == "<!doctype html>");
  REQUIRE(files.contains("vendor/hls.min.js"));
  CHECK(files.at("vendor/hls.min.js").content_type == "text/javascript; charset=utf-8");
  CHECK_FALSE(files.contains(".built"));
  CHECK_FALSE(files.contains(".git/config"));
}

TEST_CASE("M-7 no console directory loads nothing, a wrong one is refused at start-up") {
  auto none = LoadConsole("");
  REQUIRE(none.ok());
  CHECK((*none)->files.empty());
  auto missing = LoadConsole("/nonexistent/console");
  CHECK(missing.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(missing.status().message().find("--console_dir") != std::string::npos);
}

TEST_CASE("M-7 a console directory with too many files is refused, not half loaded") {
  TempDir dir("console-big");
  for (int i = 0; i < 600; ++i) Write(dir.path() / ("f" + std::to_string(i) + ".js"), "x");
  auto console = LoadConsole(dir.path().string());
  CHECK(console.status().code() == absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace meshwork::central
