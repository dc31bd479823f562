// M-5: access logs are per listener and off by default: one `http_access` line per answer
// with the client, method, target, status, bytes, duration, protocol and user agent.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/integration/harness.h"

namespace meshwork::testing {
namespace {

std::string ReadLog(const Process& p) {
  std::ifstream in(p.log_path());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE(
    "M-5 A-10 a listener named in --http_access_log logs every answer without tokens, others "
    "log none") {
  const std::string dir = MakeTempDir("access-log");
  Central logged =
      StartCentral(dir + "/a", "127.0.0.1:0", "127.0.0.1:0", {"--http_access_log=http"});
  Central quiet = StartCentral(dir + "/b");
  for (const Central* c : {&logged, &quiet}) {
    auto ok = Http("GET", c->http, "/central/api-v4/zones?x=1", "", {{"User-Agent", "probe/1.0"}});
    REQUIRE(ok.status == 200);
    REQUIRE(Http("GET", c->http, "/central/api-v4/zones/nope").status == 404);
  }
  // a viewer's token in the query is logged as its last 4 characters at most.
  REQUIRE(Http("GET", logged.http, "/ch1/index.m3u8?token=SECRETSECRETwxyz").status > 0);
  std::string line;
  REQUIRE(Eventually(
      [&] {
        std::istringstream lines(ReadLog(*logged.process));
        for (std::string l; std::getline(lines, l);) {
          if (l.find("event=http_access") != std::string::npos &&
              l.find("/central/api-v4/zones?x=1") != std::string::npos) {
            line = l;
            return true;
          }
        }
        return false;
      },
      5s));
  INFO(line);
  CHECK(line.find("listener=http") != std::string::npos);
  CHECK(line.find("client=127.0.0.1") != std::string::npos);
  CHECK(line.find("method=GET") != std::string::npos);
  CHECK(line.find("status=200") != std::string::npos);
  CHECK(line.find("protocol=HTTP/1.1") != std::string::npos);
  CHECK(line.find("probe/1.0") != std::string::npos);
  CHECK(line.find("bytes=") != std::string::npos);
  std::string all = ReadLog(*logged.process);
  CHECK(all.find("/central/api-v4/zones/nope") != std::string::npos);
  CHECK(all.find("status=404") != std::string::npos);
  CHECK(Eventually(
      [&] {
        return ReadLog(*logged.process).find("/ch1/index.m3u8?token=…wxyz") != std::string::npos;
      },
      5s));
  CHECK(ReadLog(*logged.process).find("SECRETSECRET") == std::string::npos);
  // Off by default.
  CHECK(ReadLog(*quiet.process).find("http_access") == std::string::npos);
}

}  // namespace
}  // namespace meshwork::testing
