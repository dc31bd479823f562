// Central's HTTPS listener: the same routes as HTTP, with redirects in the listener's own
// scheme (T-6), and certificates reloaded on SIGHUP (R-7).
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/integration/harness.h"
#include "tests/test_paths.h"

namespace meshwork::testing {
namespace {

void MakeCertificate(const std::string& cn, const std::string& cert, const std::string& key) {
  std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=" + cn +
                    " -days 1 -keyout '" + key + "' -out '" + cert + "' >/dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
}

// Runs `cmd` and returns its stdout.
std::string Capture(const std::string& cmd) {
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[512];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  pclose(pipe);
  return out;
}

// "STATUS LOCATION" of GET `url` without following redirects (-k: self-signed certificate).
std::string StatusAndLocation(const std::string& url) {
  return Capture("curl -sk -m 5 -o /dev/null -w '%{http_code} %{redirect_url}' '" + url + "'");
}

// The subject CN of the certificate `address` presents.
std::string PeerCommonName(const std::string& address) {
  std::string out = Capture("openssl s_client -connect " + address +
                            " </dev/null 2>/dev/null | openssl x509 -noout -subject 2>/dev/null");
  size_t at = out.find("CN");
  if (at == std::string::npos) return "";
  std::string cn = out.substr(at);
  size_t eq = cn.find('=');
  cn = cn.substr(eq + 1);
  while (!cn.empty() && (cn.front() == ' ')) cn.erase(0, 1);
  while (!cn.empty() && (cn.back() == '\n' || cn.back() == ' ')) cn.pop_back();
  return cn;
}

TEST_CASE("T-6 the listener decides the redirect scheme: https in, https out") {
  auto dir = MakeTempDir("t6-https");
  std::string cert = dir + "/cert.pem", key = dir + "/key.pem";
  MakeCertificate("central-one", cert, key);
  auto central =
      StartCentral(dir + "/data", "127.0.0.1:0", "127.0.0.1:0",
                   {"--https-listen=127.0.0.1:0", "--tls-cert=" + cert, "--tls-key=" + key});
  REQUIRE_FALSE(central.https.empty());

  auto streamer = StartStreamer(central.grpc, "ingest-1", "ingest");
  REQUIRE(Http("PUT", central.http, kApi + "/streams/ch1",
               R"({"placement": {"streamers": ["ingest-1"]}})")
                  .status /
              100 ==
          2);
  REQUIRE(Eventually([&] { return IsOnline(central, "ingest-1"); }, 10s));

  std::string via_https;
  REQUIRE(Eventually(
      [&] {
        via_https = StatusAndLocation("https://" + central.https + "/ch1/index.m3u8");
        return via_https.rfind("302 ", 0) == 0;
      },
      5s));
  INFO("https answer: " << via_https);
  CHECK(via_https.rfind("302 https://", 0) == 0);
  CHECK(via_https.find("/ch1/index.m3u8") != std::string::npos);

  std::string via_http = StatusAndLocation("http://" + central.http + "/ch1/index.m3u8");
  INFO("http answer: " << via_http);
  CHECK(via_http.rfind("302 http://", 0) == 0);
  CHECK(via_http.find("/ch1/index.m3u8") != std::string::npos);

  // The admin API answers on the HTTPS listener too (same routes).
  CHECK(StatusAndLocation("https://" + central.https + kApi + "/streamers/ingest-1")
            .rfind("200 ", 0) == 0);
}

TEST_CASE("R-7 central reloads its TLS certificate on SIGHUP without restart") {
  auto dir = MakeTempDir("r7-https");
  std::string cert = dir + "/cert.pem", key = dir + "/key.pem";
  MakeCertificate("central-one", cert, key);
  auto central =
      StartCentral(dir + "/data", "127.0.0.1:0", "127.0.0.1:0",
                   {"--https-listen=127.0.0.1:0", "--tls-cert=" + cert, "--tls-key=" + key});
  REQUIRE(PeerCommonName(central.https) == "central-one");

  MakeCertificate("central-two", cert, key);
  central.process->Signal(SIGHUP);
  CHECK(Eventually([&] { return PeerCommonName(central.https) == "central-two"; }, 5s));

  // A reload from a broken file keeps the current certificate and the process.
  std::remove(key.c_str());
  central.process->Signal(SIGHUP);
  CHECK(Http("GET", central.http, kApi + "/streamers").status == 200);
  CHECK(PeerCommonName(central.https) == "central-two");

  central.process->Signal(SIGTERM);
  int status = central.process->Wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("R-7 central refuses --https-listen without certificate files") {
  auto dir = MakeTempDir("r7-nocert");
  auto process =
      Process::Start({CentralBin(), "--data-dir=" + dir + "/data", "--http-listen=127.0.0.1:0",
                      "--grpc-listen=127.0.0.1:0", "--https-listen=127.0.0.1:0"},
                     dir + ".central.log");
  int status = process->Wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
}

}  // namespace
}  // namespace meshwork::testing
