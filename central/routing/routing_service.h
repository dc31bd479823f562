// Central's routing front: keeps the current RoutingSnapshot (rebuilt on every config
// change, swapped atomically, C-7), answers decisions through the Selector, and turns them
// into node URLs and the JSON of Z-21. Thread-safe; decisions never block.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "central/cluster/node_registry.h"
#include "central/routing/routing_snapshot.h"
#include "central/routing/selector.h"
#include "common/metrics/thread_histogram.h"
#include "common/sync/snapshot.h"
#include "nlohmann/json.hpp"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace meshwork::central {

class RoutingService {
 public:
  // `registry` must outlive the service; `metrics` may be null.
  RoutingService(NodeRegistry* registry, prometheus::Registry* metrics);

  // Rebuilds and swaps the snapshot. Called on the config writer's thread.
  void ConfigChanged(const ClusterConfig& config);
  std::shared_ptr<const RoutingSnapshot> snapshot() const { return snapshot_.Get(); }

  // What a viewer's redirect reads (P-2): the snapshot and the streams live somewhere,
  // through this thread's caches (Snapshot::Read): while neither changed, one atomic load
  // each — no lock and no shared reference count, whose cache lines would bounce between the
  // HTTP workers' cores. Valid on the calling thread until its next ReadState() (of any
  // RoutingService).
  struct State {
    const RoutingSnapshot* snapshot;
    const NodeRegistry::StreamSet* live;
  };
  State ReadState() const;

  absl::StatusOr<RouteDecision> Route(std::string_view stream,
                                      const std::optional<net::IpAddress>& client,
                                      RouteMode mode = RouteMode::kDecide) const;
  // The same with the snapshot the caller already holds (one snapshot per request).
  absl::StatusOr<RouteDecision> Route(const RoutingSnapshot& snapshot, std::string_view stream,
                                      const std::optional<net::IpAddress>& client,
                                      RouteMode mode) const;
  // The same with the live streams the caller holds too (from ReadState()).
  absl::StatusOr<RouteDecision> Route(const RoutingSnapshot& snapshot,
                                      const NodeRegistry::StreamSet& live, std::string_view stream,
                                      const std::optional<net::IpAddress>& client,
                                      RouteMode mode) const;

  // C-1: {scheme}://{hostname}[:{port}], the port left out when it is the scheme's default.
  static std::string NodeUrl(const RouteNode& node, std::string_view scheme);
  // The same appended to `out` (a redirect builds its Location in one string, P-2).
  static void AppendNodeUrl(const RouteNode& node, std::string_view scheme, std::string& out);
  // The viewer listener's URL for other nodes (relay upstreams, archive proxy, D-5): the
  // node's internal address and its listener's own port when it announced one, else
  // NodeUrl(node, "http").
  static std::string InternalUrl(const RouteNode& node);
  // S-23: http://{hostname}:{publish port}; empty when the node has no publish listener.
  static std::string PublishUrl(const RouteNode& node);

  // Z-21 body for a decision made in kListAll mode.
  nlohmann::json DecisionJson(const RoutingSnapshot& snapshot, const RouteDecision& decision,
                              std::string_view scheme) const;

  // The longest leading stream name of a viewer path "/a/b/c/file" that the cluster knows
  // (configured, or live on some node in `live`): "a/b" when that is a stream; a view into
  // `path`, nullopt when no prefix is a known stream. Nothing allocated.
  static std::optional<std::string_view> StreamOfPath(const RoutingSnapshot& snapshot,
                                                      const NodeRegistry::StreamSet& live,
                                                      std::string_view path);

  // S-19: the nodes `edge_id` may relay `stream` from, best first: ingest and origin nodes
  // that are online and report the stream working, those in the edge's zone chain first (in
  // chain order), then the rest; within a zone origins before ingest nodes, then by node id.
  // S-26: an edge of a zone that is not the stream's parent edge there (ParentEdge) has the
  // parent first: one edge per zone pulls from outside, its siblings from it. The parent's own
  // list holds no edge, so relay chains are one level deep and never loop. Empty when none.
  std::vector<const RouteNode*> Upstreams(const RoutingSnapshot& snapshot, std::string_view stream,
                                          const std::string& edge_id) const;

  // S-26: the edge of `zone` that pulls `stream` into the zone for its siblings: among the
  // zone's edges for which `eligible` holds, the one with the highest FNV-1a hash of
  // (stream, node id) — rendezvous hashing: every central names the same edge without
  // talking to the others, streams spread over a zone's edges, and an edge that fails moves
  // only its own streams to the next. -1 when the zone has no eligible edge.
  static int ParentEdge(const RoutingSnapshot& snapshot, std::string_view stream, int zone,
                        const std::function<bool(const RouteNode&)>& eligible);
  // Whether `node` may be a parent edge at `now`: online and not draining (CS-4: a drained
  // edge is about to go; its zone's relay should already hang off another).
  static bool CanBeParent(const RouteNode& node, std::chrono::steady_clock::time_point now,
                          std::chrono::nanoseconds offline_after) {
    return node.live && !node.drain && node.live->Online(now, offline_after);
  }

  const Selector& selector() const { return selector_; }
  NodeRegistry& registry() const { return *registry_; }

 private:
  NodeRegistry* registry_;
  Selector selector_;
  Snapshot<RoutingSnapshot> snapshot_;
  prometheus::Histogram* build_seconds_ = nullptr;
  // Observed on every redirect, from every HTTP worker: counted per thread (P-2).
  std::shared_ptr<metrics::ThreadHistogram> decision_seconds_;
};

}  // namespace meshwork::central
