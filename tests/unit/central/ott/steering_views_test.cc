// CS-1: the pathways central pushes to the nodes of a steered stream.
#include "central/ott/steering_views.h"

#include <catch2/catch.hpp>

#include "tests/unit/central/ott/ott_fixture.h"

namespace meshwork::central::ott {
namespace steering_views_unit {
namespace {

using namespace testing;  // ott_fixture.h

// ch1 placed on ingest-1 and ingest-3, steered; an edge online, another offline.
struct Steered {
  ClusterConfig config = HealthyConfig();
  NodeStates nodes = HealthyNodes();
  Steered() {
    auto stream = config.streams["ch1"].object;
    stream["steering"] = {{"enabled", true}, {"ttl_s", 7}, {"rebalance_percent", 25}};
    config.streams["ch1"].object = stream;
    for (const char* id : {"edge-1", "edge-2"}) {
      StreamerRecord record;
      record.settings.set_id(id);
      record.settings.set_role(meshwork::v1::ROLE_EDGE);
      config.streamers[id] = record;
    }
    nodes["edge-1"] = HealthyNode("edge-1", "other", 1000);
    nodes["edge-2"] = HealthyNode("edge-2", "other", 1000);
    nodes["edge-2"].online = false;
  }
};

nlohmann::json ViewOf(const std::map<std::string, v1::OttGroupViews>& views,
                      const std::string& node, const std::string& group) {
  auto it = views.find(node);
  if (it == views.end()) return nullptr;
  for (const auto& g : it->second.groups()) {
    if (g.group() == group) return nlohmann::json::parse(g.view_json());
  }
  return nullptr;
}

TEST_CASE("CS-1 a steered stream's pathways: its nodes and the online edges, to each of them") {
  Steered s;
  std::map<std::string, v1::OttGroupViews> views;
  AddSteeringViews(s.config, s.nodes, "http://central.example.net:8080", views);
  for (const char* node : {"ingest-1", "ingest-3", "edge-1"}) {
    auto view = ViewOf(views, node, "steering:ch1");
    INFO(node << " " << view.dump());
    REQUIRE(view.is_object());
    CHECK(view["server_uri"] == "http://central.example.net:8080/steering/ch1");
    CHECK(view["ttl_s"] == 7);
    std::vector<std::string> members;
    for (const auto& m : view["members"]) members.push_back(m["node"]);
    CHECK(members == std::vector<std::string>{"edge-1", "ingest-1", "ingest-3"});
    CHECK(view["members"][1]["http_base"] == "http://ingest-1.example.net:8080");
  }
  // Not placed there and not an edge; an offline edge: no view.
  CHECK(ViewOf(views, "ingest-2", "steering:ch1").is_null());
  CHECK(ViewOf(views, "edge-2", "steering:ch1").is_null());
}

TEST_CASE("CS-1 no steering view without steering on or without central's public URL") {
  Steered s;
  std::map<std::string, v1::OttGroupViews> views;
  AddSteeringViews(s.config, s.nodes, "", views);
  CHECK(views.empty());
  s.config.streams["ch1"].object["steering"]["enabled"] = false;
  AddSteeringViews(s.config, s.nodes, "http://central.example.net", views);
  CHECK(views.empty());
}

}  // namespace
}  // namespace steering_views_unit
}  // namespace meshwork::central::ott
