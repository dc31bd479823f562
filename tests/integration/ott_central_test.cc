// OTT redundancy on central end to end (O-7, O-15, O-18, O-19): a real central, one node as
// a raw control-channel client (so the test sees exactly what central pushes) and one
// simulated node (tools/simnodes).
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "meshwork/v1/control.grpc.pb.h"
#include "tests/integration/harness.h"
#include "tools/simnodes/sim_node.h"

namespace meshwork::testing {
namespace {

// A node speaking the control protocol by hand: Register, then a Session that reports every
// 200 ms (holding the keys it was given) and records every update central pushes.
class RawNode {
 public:
  RawNode(const std::string& central_grpc, const std::string& id) : id_(id) {
    channel_ = grpc::CreateChannel(central_grpc, grpc::InsecureChannelCredentials());
    stub_ = meshwork::v1::Control::NewStub(channel_);
  }
  ~RawNode() {
    stop_ = true;
    if (context_) context_->TryCancel();
    if (writer_.joinable()) writer_.join();
    if (reader_.joinable()) reader_.join();
  }

  meshwork::v1::ConfigUpdate Register() {
    meshwork::v1::RegisterRequest request;
    request.set_node_id(id_);
    request.set_version("test");
    request.set_protocol_version(1);
    request.set_role(meshwork::v1::ROLE_INGEST);
    request.set_hostname(id_ + ".example.net");
    auto* http = request.add_listeners();
    http->set_name("http");
    http->set_scheme("http");
    http->set_port(8080);
    meshwork::v1::RegisterResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    context.AddMetadata("authorization", "Bearer " + ClusterToken());
    auto status = stub_->Register(&context, request, &response);
    REQUIRE(status.ok());
    Apply(response.snapshot());
    return response.snapshot();
  }

  void StartSession(uint64_t revision) {
    context_ = std::make_unique<grpc::ClientContext>();
    context_->AddMetadata("authorization", "Bearer " + ClusterToken());
    stream_ = stub_->Session(context_.get());
    meshwork::v1::SessionMessage hello;
    hello.mutable_hello()->set_node_id(id_);
    hello.mutable_hello()->set_revision(revision);
    REQUIRE(stream_->Write(hello));
    reader_ = std::thread([this] {
      meshwork::v1::ConfigUpdate update;
      while (stream_->Read(&update)) Apply(update);
    });
    writer_ = std::thread([this] {
      while (!stop_) {
        meshwork::v1::SessionMessage message;
        auto* report = message.mutable_report();
        report->set_node_clock_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count());
        report->set_play_sessions(3);
        report->set_cpu_percent(5);
        {
          absl::MutexLock lock(&mu_);
          for (const auto& k : keys_.keys()) report->add_viewing_key_ids(k.id());
        }
        auto* stream = report->add_streams();
        stream->set_name("ch1");
        stream->set_working(true);
        stream->set_live_window_age_s(1);
        stream->set_timeline_fingerprint("100:18000000:180000");
        auto* rendition = stream->add_renditions();
        rendition->set_name("main");
        rendition->set_codecs("avc1.64001f,mp4a.40.2");
        rendition->set_bitrate_kbit(3000);
        if (!stream_->Write(message)) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    });
  }

  meshwork::v1::ViewingKeys keys() const {
    absl::MutexLock lock(&mu_);
    return keys_;
  }
  meshwork::v1::OttGroupViews views() const {
    absl::MutexLock lock(&mu_);
    return views_;
  }

 private:
  void Apply(const meshwork::v1::ConfigUpdate& update) {
    absl::MutexLock lock(&mu_);
    if (update.full() || update.has_viewing_keys()) keys_ = update.viewing_keys();
    if (update.full() || update.has_ott_groups()) views_ = update.ott_groups();
  }

  std::string id_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<meshwork::v1::Control::Stub> stub_;
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<
      grpc::ClientReaderWriter<meshwork::v1::SessionMessage, meshwork::v1::ConfigUpdate>>
      stream_;
  std::atomic<bool> stop_{false};
  std::thread reader_;
  std::thread writer_;
  mutable absl::Mutex mu_;
  meshwork::v1::ViewingKeys keys_;
  meshwork::v1::OttGroupViews views_;
};

nlohmann::json Get(const Central& c, const std::string& path) {
  auto r = Http("GET", c.http, kApi + path);
  INFO(path << " → " << r.status << " " << r.body);
  REQUIRE(r.status == 200);
  return r.Json();
}

TEST_CASE(
    "O-7 M-3 central keeps a viewing key in use and rotates it on request, never for another "
    "site's page") {
  auto dir = MakeTempDir("ott-key");
  auto central = StartCentral(dir);
  auto block = Get(central, "/ott-key");
  CHECK(block["state"] == "in_use");
  CHECK(block["key_id"] == "k1");
  CHECK(block["nodes_holding"] == "0/0");
  CHECK(block["rotated_at"].is_string());

  auto rotated = Http("POST", central.http, kApi + "/ott-key/rotate");
  REQUIRE(rotated.status == 200);
  CHECK(rotated.Json()["key_id"] == "k2");
  CHECK(Get(central, "/ott-key")["key_id"] == "k2");

  // A restarted central keeps its keys.
  std::string http = central.http, grpc = central.grpc;
  central.process.reset();
  auto again = StartCentral(dir, http, grpc);
  CHECK(Get(again, "/ott-key")["key_id"] == "k2");

  // No token file here: a page of another site still cannot change anything through an
  // operator's browser (CSRF); the console's own pages (same origin) and tools can.
  CHECK(Http("POST", again.http, kApi + "/ott-key/rotate", "", {{"Origin", "https://evil.example"}})
            .status == 403);
  CHECK(Http("POST", again.http, kApi + "/ott-key/rotate", "", {{"Sec-Fetch-Site", "cross-site"}})
            .status == 403);
  CHECK(Http("DELETE", again.http, kApi + "/zones/none", "", {{"Origin", "null"}}).status == 403);
  CHECK(Get(again, "/ott-key")["key_id"] == "k2");
  CHECK(Http("POST", again.http, kApi + "/ott-key/rotate", "",
             {{"Origin", "http://" + again.http}, {"Sec-Fetch-Site", "same-origin"}})
            .status == 200);
  CHECK(Get(again, "/ott-key")["key_id"] == "k3");
}

TEST_CASE(
    "O-2 O-19 a stream with ott on two nodes forms one group of both members, the key "
    "distributed") {
  auto dir = MakeTempDir("ott-groups");
  auto central = StartCentral(dir);
  auto put = Http("PUT", central.http, kApi + "/streams/ch1",
                  R"({"placement": {"streamers": ["ingest-1", "ingest-2"]},
                      "ott": {"enabled": true, "group": "ch1"}})");
  INFO(put.body);
  REQUIRE(put.status == 201);
  CHECK(put.Json()["ott"] == nlohmann::json::parse(R"({"enabled": true, "group": "ch1",
                                 "backup": "can_replace", "stale_after_ms": null,
                                 "min_protocol_version": null})"));
  auto bad = Http("PUT", central.http, kApi + "/streams/ch2", R"({"ott": {"enabled": true}})");
  CHECK(bad.status == 400);
  CHECK(bad.Json()["error"]["field"] == "ott.group");

  // ingest-1 by hand: the snapshot at registration carries the viewing key.
  RawNode raw(central.grpc, "ingest-1");
  auto snapshot = raw.Register();
  REQUIRE(snapshot.viewing_keys().keys_size() == 1);
  CHECK(snapshot.viewing_keys().keys(0).id() == "k1");
  CHECK(snapshot.viewing_keys().keys(0).secret().size() == 32);
  CHECK(snapshot.viewing_keys().keys(0).not_after_unix_ms() == 0);
  raw.StartSession(snapshot.revision());

  // ingest-2 simulated (it holds no key).
  sim::SimCluster sims(central.grpc, ClusterToken(), std::chrono::milliseconds(200));
  sim::SimNodeSpec spec;
  spec.id = "ingest-2";
  spec.hostname = "ingest-2.example.net";
  spec.role = meshwork::v1::ROLE_INGEST;
  spec.http_port = 8080;
  spec.streams = {{"ch1", true}};
  sims.Add(spec);
  REQUIRE(sims.WaitRegistered(5s));

  auto both_online = [&] {
    auto r = Http("GET", central.http, kApi + "/ott-groups");
    if (r.status != 200) return false;
    auto j = r.Json();
    if (j["groups"].size() != 1) return false;
    const auto& members = j["groups"][0]["members"];
    return members.size() == 2 && members[0]["online"] == true && members[1]["online"] == true;
  };
  REQUIRE(Eventually(both_online, 5s));
  auto groups = Get(central, "/ott-groups");
  INFO(groups.dump(2));
  const auto& group = groups["groups"][0];
  CHECK(group["name"] == "ch1");
  CHECK(group["members"][0]["node"] == "ingest-1");
  CHECK(group["members"][0]["stream"] == "ch1");
  CHECK(group["members"][0]["key_held"] == true);
  CHECK(group["members"][0]["http_base"] == "http://ingest-1.example.net:8080");
  CHECK(group["members"][1]["node"] == "ingest-2");
  CHECK(group["members"][1]["key_held"] == false);
  CHECK(group["members"][1]["eligible"] == false);
  CHECK(group["state"] == "no_backup");  // ingest-1's only backup does not hold the key

  auto one = Get(central, "/ott-groups/ch1");
  CHECK(one["name"] == "ch1");
  CHECK(one["members"].size() == 2);
  CHECK(Http("GET", central.http, kApi + "/ott-groups/nope").status == 404);

  CHECK(Get(central, "/ott-key")["nodes_holding"] == "1/2");
  CHECK(Get(central, "/ott-key")["state"] == "rotating");

  // The member node receives the group's view, listing both members.
  auto has_view = [&] {
    auto views = raw.views();
    if (views.groups_size() != 1) return false;
    auto view = nlohmann::json::parse(views.groups(0).view_json(), nullptr, false);
    return view.is_object() && view["group"] == "ch1" && view["members"].size() == 2;
  };
  REQUIRE(Eventually(has_view, 5s));
  auto view = nlohmann::json::parse(raw.views().groups(0).view_json());
  CHECK(view["members"][0]["node"] == "ingest-1");
  CHECK(view["members"][0]["load"] == 3);
  CHECK(view["members"][1]["node"] == "ingest-2");
  CHECK(view["members"][1]["eligible"] == false);

  // Alerts: ingest-1 has no eligible backup (70), ingest-2 has problems (78).
  auto alerts_up = [&] {
    auto j = Get(central, "/alerts");
    bool no_backup = false, problem = false;
    for (const auto& a : j["alerts"]) {
      if (a["code"] == 70 && a["node"] == "ingest-1") no_backup = true;
      if (a["code"] == 78 && a["node"] == "ingest-2") problem = true;
    }
    return no_backup && problem;
  };
  REQUIRE(Eventually(alerts_up, 5s));
  auto metrics = Http("GET", central.http, "/metrics").body;
  CHECK(metrics.find("meshwork_alerts{code=\"70\"}") != std::string::npos);
  CHECK(metrics.find("meshwork_alert_active{") != std::string::npos);

  // A rotation reaches the node as a delta: the new key current, the old one in overlap.
  auto rotated = Http("POST", central.http, kApi + "/ott-key/rotate");
  REQUIRE(rotated.status == 200);
  auto has_both = [&] {
    auto keys = raw.keys();
    return keys.keys_size() == 2 && keys.keys(0).id() == "k2" &&
           keys.keys(0).not_after_unix_ms() == 0 && keys.keys(1).id() == "k1" &&
           keys.keys(1).not_after_unix_ms() > 0;
  };
  REQUIRE(Eventually(has_both, 5s));
  // The API never shows a secret.
  std::string secret = raw.keys().keys(0).secret();
  for (const std::string path : {"/ott-key", "/ott-groups", "/alerts", "/streams/ch1"}) {
    CHECK(Http("GET", central.http, kApi + path).body.find(secret) == std::string::npos);
  }
}

}  // namespace
}  // namespace meshwork::testing
