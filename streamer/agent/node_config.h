// The configuration a streamer runs on: whatever central last pushed, applied by swapping an
// immutable snapshot. With central away the node keeps serving on it (C-5).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/crypto/jwt.h"
#include "common/net/cidr.h"
#include "meshwork/v1/control.pb.h"
#include "nlohmann/json.hpp"
#include "streamer/config/stream_config.h"

namespace meshwork::streamer {

// O-6, O-15: one member of an OTT group as central describes it.
struct OttMember {
  std::string node;
  std::string stream;
  bool eligible = false;
  std::string http_base;   // "http://host:port", or empty
  std::string https_base;  // "https://host:port", or empty
  bool address_public = false;
  bool shared_name = false;
  uint64_t load = 0;
  // D-6: what the member has recorded, per protocol ("ts", "fmp4"): [from_ms, to_ms).
  std::map<std::string, std::pair<int64_t, int64_t>> archive;
  std::string zone;  // CS-1: the member's zone (steering views only)
};
// An OTT group, or (CS-1) a steered stream's pathways: group "steering:<stream>", whose
// members are the nodes that can serve the stream (central/ott/steering_views.h).
struct OttView {
  std::string group;
  std::vector<OttMember> members;  // in node-id order
  std::string steering_uri;        // CS-1: central's steering server for the stream
};

// O-7: a viewing key this node accepts passes signed with (the secret never leaves memory).
struct HeldKey {
  std::string id;
  std::string secret;
  int64_t not_after_unix_ms = 0;  // 0: the current key, which also signs
  int64_t created_unix_ms = 0;
};

struct NodeConfig {
  uint64_t revision = 0;
  // Streams placed on this node, each parsed once from the stream object central sent.
  StreamConfigs streams;
  // S-19: those of `streams` this node relays (an edge's streams placed elsewhere).
  std::set<std::string> relayed;
  // S-23: those of `streams` this node takes from other nodes' publishes (an origin named in
  // their `publish`); it packages nothing of them.
  std::set<std::string> publish_targets;
  std::shared_ptr<const net::CidrSet> trusted_proxies = std::make_shared<const net::CidrSet>();
  meshwork::v1::StreamerSettings settings;
  std::map<std::string, OttView> ott_groups;  // by group name
  std::vector<HeldKey> viewing_keys;
  // the keys viewer tokens are checked with (replaced whole when central changes them).
  std::shared_ptr<const crypto::JwtKeySet> access_keys =
      std::make_shared<const crypto::JwtKeySet>();
  // logins refused until a Unix time (seconds).
  std::map<std::string, int64_t, std::less<>> revoked_logins;
};

// The snapshot after applying `update` to `current`: a full update replaces everything, a
// delta replaces only the sections it carries. Invalid CIDRs and access keys (which central
// never sends) are skipped, a key with a warning.
std::shared_ptr<const NodeConfig> ApplyUpdate(const NodeConfig& current,
                                              const meshwork::v1::ConfigUpdate& update);

}  // namespace meshwork::streamer
