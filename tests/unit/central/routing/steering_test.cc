// CS-2, CS-3: the order of pathways one steering answer gives, and the query it reads.
#include "central/routing/steering.h"

#include <catch2/catch.hpp>

#include "central/model/steering_config.h"

namespace meshwork::central {
namespace steering_unit {
namespace {

using Ids = std::vector<std::string>;

// Two nodes in the client's zone (fewest sessions first), one in the fallback zone, one
// draining.
std::vector<PathwayNode> Nodes(uint64_t load_a = 10, uint64_t load_b = 11) {
  return {{"a", 0, load_a, true}, {"b", 0, load_b, true}, {"c", 1, 0, true}, {"d", 0, 0, false}};
}

TEST_CASE("CS-2 without a current pathway the answer is the selector's order") {
  CHECK(PathwayPriority(Nodes(), "", 25, true).priority == Ids{"a", "b", "c", "d"});
  CHECK(PathwayPriority(Nodes(), "unknown", 25, true).priority == Ids{"a", "b", "c", "d"});
}

TEST_CASE("CS-3 a viewer stays on its pathway while its load is within rebalance_percent") {
  // b has 11 sessions, the best 10: 11 ≤ 10 + 25 % + 1.
  auto r = PathwayPriority(Nodes(10, 11), "b", 25, true);
  CHECK(r.priority == Ids{"b", "a", "c", "d"});
  CHECK_FALSE(r.moved_for_load);
  // 14 > 10 + 2 + 1: moved, and said so (the stream's move budget is charged for it).
  r = PathwayPriority(Nodes(10, 14), "b", 25, true);
  CHECK(r.priority == Ids{"a", "b", "c", "d"});
  CHECK(r.moved_for_load);
  // Out of move budget: it stays.
  r = PathwayPriority(Nodes(10, 14), "b", 25, false);
  CHECK(r.priority == Ids{"b", "a", "c", "d"});
  CHECK_FALSE(r.moved_for_load);
  // rebalance_percent 0 still leaves one session of slack.
  CHECK(PathwayPriority(Nodes(10, 11), "b", 0, true).priority.front() == "b");
  CHECK(PathwayPriority(Nodes(10, 12), "b", 0, true).priority.front() == "a");
}

TEST_CASE(
    "CS-3 CS-4 a viewer leaves its pathway when it is ineligible or a better zone has a node") {
  // c is in the fallback zone, the client's own zone has eligible nodes: c is not kept first.
  auto r = PathwayPriority(Nodes(), "c", 25, true);
  CHECK(r.priority == Ids{"a", "b", "c", "d"});
  CHECK_FALSE(r.moved_for_load);
  // d is draining: last, whatever the viewer is on.
  CHECK(PathwayPriority(Nodes(), "d", 25, true).priority.back() == "d");
  // Nothing eligible (all draining): the order as given, never empty.
  std::vector<PathwayNode> drained = {{"a", 0, 0, false}, {"b", 0, 0, false}};
  CHECK(PathwayPriority(drained, "b", 25, true).priority == Ids{"a", "b"});
}

TEST_CASE("CS-2 the steering query: hls.js and dash.js pathways, the viewer's own parameters") {
  SteeringRequest r;
  ParseSteeringQuery("_HLS_pathway=node-b&_HLS_throughput=5000000&token=abc", r);
  CHECK(r.current == "node-b");
  CHECK_FALSE(r.dash);
  CHECK(r.base_query == "token=abc");

  // dash.js: the service locations it used since the last answer, quoted, the newest last.
  SteeringRequest d;
  ParseSteeringQuery("format=dash&_DASH_pathway=%22node-a%2Cnode-b%22&_DASH_throughput=1,2", d);
  CHECK(d.current == "node-b");
  CHECK(d.dash);
  CHECK(d.base_query == "format=dash");
  SteeringRequest plain;
  ParseSteeringQuery("_DASH_pathway=node-a", plain);
  CHECK(plain.current == "node-a");
  CHECK(plain.dash);

  // Anything that is not a node id is no pathway (never echoed back).
  for (const char* bad : {"_HLS_pathway=%3Cscript%3E", "_HLS_pathway=", "_HLS_pathway=A_B",
                          "_DASH_pathway=%22%22", "_HLS_pathway=%ZZ"}) {
    SteeringRequest b;
    ParseSteeringQuery(bad, b);
    CHECK(b.current.empty());
  }
  // A newest entry that is not an id falls back to the one before it.
  SteeringRequest mixed;
  ParseSteeringQuery("_DASH_pathway=%22node-a%2C%3Cx%3E%22", mixed);
  CHECK(mixed.current == "node-a");
}

// The field named by a refused steering member.
std::string Refused(const std::string& steering) {
  nlohmann::json out;
  auto status = ResolveSteering(nlohmann::json::parse(R"({"steering": )" + steering + "}"), out);
  CHECK_FALSE(status.ok());
  return std::string(status.message());
}

TEST_CASE("CS-1 CS-3 the stream's steering member: defaults, bounds and field-named errors") {
  nlohmann::json out;
  REQUIRE(ResolveSteering(nlohmann::json::parse(R"({"steering": {"enabled": true}})"), out).ok());
  CHECK(out["steering"] ==
        nlohmann::json::parse(R"({"enabled": true, "ttl_s": 10, "rebalance_percent": 25})"));
  SteeringSettings s = SteeringOf(out);
  CHECK(s.enabled);
  CHECK(s.ttl_s == 10);
  nlohmann::json none;
  REQUIRE(ResolveSteering(nlohmann::json::object(), none).ok());
  CHECK_FALSE(none.contains("steering"));
  CHECK_FALSE(SteeringOf(none).enabled);

  CHECK(Refused(R"({"ttl_s": 0})").find("steering.ttl_s") != std::string::npos);
  CHECK(Refused(R"({"ttl_s": 3601})").find("steering.ttl_s") != std::string::npos);
  CHECK(Refused(R"({"ttl_s": "10"})").find("steering.ttl_s") != std::string::npos);
  CHECK(Refused(R"({"rebalance_percent": -1})").find("steering.rebalance_percent") !=
        std::string::npos);
  CHECK(Refused(R"({"enabled": "yes"})").find("steering.enabled") != std::string::npos);
  CHECK(Refused(R"({"colour": 1})").find("steering.colour") != std::string::npos);
  CHECK(Refused(R"([1])").find("steering") != std::string::npos);
}

}  // namespace
}  // namespace steering_unit
}  // namespace meshwork::central
