// The streamer's side of OTT redundancy (O-3, O-3a, O-6, O-7, O-16, O-20): master playlists
// with balanced backup variants and passes, pass verification for viewers arriving from
// other nodes, backup-session accounting and overload refusal, stale-stream 404s, and the
// redirect of a new viewer to a working member. Everything is decided locally from the group
// view and viewing keys central pushed (no call to central per viewer).
// Thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "common/http/types.h"
#include "common/metrics/metrics.h"
#include "common/sync/snapshot.h"
#include "common/time/clock.h"
#include "nlohmann/json.hpp"
#include "prometheus/counter.h"
#include "prometheus/registry.h"
#include "streamer/agent/node_config.h"
#include "streamer/playlist/hls_writer.h"

namespace meshwork::streamer {

// A stream's `ott` settings (its StreamConfig's).
using OttSettings = OttConfig;

// D-5: one member's claim on an archive period: its range of the request's protocol.
struct ArchiveCandidate {
  bool self = false;
  uint64_t load = 0;
  std::optional<std::pair<int64_t, int64_t>> range;  // [from_ms, to_ms); nullopt: none
};
// The candidate whose range covers the largest part of [from_ms, to_ms) (ties: this node,
// then the least loaded, then the first); nullopt when none covers any of it.
std::optional<size_t> ChooseArchiveHolder(const std::vector<ArchiveCandidate>& candidates,
                                          int64_t from_ms, int64_t to_ms);

class OttGate {
 public:
  static constexpr int64_t kPassLifetimeS = 6 * 3600;

  OttGate(std::string node_id, const Snapshot<NodeConfig>* config, const Clock& clock,
          prometheus::Registry* registry);

  // The OTT settings of the streams placed here (call on every configuration change).
  void Apply(const NodeConfig& config);
  // The stream's settings (disabled when it is not an OTT stream).
  OttSettings Settings(const std::string& stream) const;

  // The node's load, sampled once a second (O-16).
  void SetLoad(double cpu_percent, uint64_t out_kbit);

  // O-6: the master playlist listing this node's variant and up to two backups, or nullopt
  // when backups do not apply (not an OTT stream, no usable peer, a player that does not
  // switch (O-20), several renditions). `uri_query` (A-3: the viewer's token) follows every
  // variant URI.
  std::optional<std::string> MasterWithBackups(const http::RequestContext& ctx,
                                               const std::string& stream, const OttSettings& ott,
                                               const hls::Variant& variant,
                                               const std::string& rendition,
                                               std::string_view uri_query = {});

  // CS-1: the pathways of `stream`'s master playlists and MPDs for this viewer, or nullopt
  // when steering is off for it (central sent no "steering:<stream>" view): this node first
  // (relative URIs; `self_base` its absolute base when known), then every other candidate whose
  // address this viewer may use (O-11…O-14), those of this node's zone first, each part in
  // node-id order, kMaxPathways at most.
  static constexpr size_t kMaxPathways = 8;
  std::optional<hls::Steering> Pathways(const http::RequestContext& ctx,
                                        const std::string& stream) const;

  // S-17: the BaseURLs of an OTT stream's MPD for this viewer: this node (at its absolute base;
  // none when that is unknown), then up to two eligible peers whose address it may use (the O-6
  // rules), in node-id order; empty when backups do not apply (not an OTT stream, a player that
  // does not switch, no peer).
  std::vector<hls::Pathway> MpdBackups(const http::RequestContext& ctx, const std::string& stream,
                                       const OttSettings& ott) const;

  // O-7, O-16: a request carrying `?pass=`. nullopt: admitted (counted as a backup session);
  // otherwise the answer to send (403 with the reason, 429 when overloaded).
  std::optional<http::Response> AdmitPass(const http::RequestContext& ctx,
                                          const std::string& stream, const std::string& pass,
                                          std::string_view cors,
                                          std::chrono::milliseconds active_window);

  // O-3: where to send a new viewer of a stream not working here: the least-loaded eligible
  // member's URL for the same path with a pass, or empty when there is none.
  std::string RedirectTarget(const http::RequestContext& ctx, const std::string& stream,
                             const OttSettings& ott, std::string_view path_in_stream);

  // D-5: where an archive request for [from_ms, to_ms) of `proto` ("ts"/"fmp4") goes when
  // this node's own range (`own`) does not hold all of it: kServe (this node covers the most,
  // or the stream is not an OTT stream), kRedirect to `location` (the member covering the
  // most: the same path there, with a pass), or kNone (no member covers any of it). Members
  // need not be eligible for live playback: a recording outlives its input.
  struct ArchiveDecision {
    enum Kind { kServe, kRedirect, kNone } kind = kServe;
    std::string location;
  };
  ArchiveDecision ArchiveHolder(const http::RequestContext& ctx, const std::string& stream,
                                const std::string& proto, int64_t from_ms, int64_t to_ms,
                                std::optional<std::pair<int64_t, int64_t>> own,
                                std::string_view path_in_stream);

  // Drops the backup sessions (O-16) that expired, then counts those left (each client's up to
  // its counted share). A writer, not a getter: it takes the gate's lock exclusively.
  uint64_t ExpireAndCountBackupSessions();
  uint64_t refusals() const { return refusals_.load(); }
  std::vector<std::string> held_key_ids() const;

 private:
  struct Usable {
    const OttMember* member;
    std::string base;
  };
  // Eligible members of the group other than this node whose address this viewer may use.
  std::vector<Usable> UsablePeers(const NodeConfig& config, const OttSettings& ott,
                                  const http::RequestContext& ctx,
                                  bool require_eligible = true) const;
  // This node's own base URL for this viewer as the group's view has it ("" when unknown):
  // an MPD cannot mix a relative BaseURL with absolute ones (dash.js keeps only the first).
  std::string OwnBase(const NodeConfig& config, const std::string& group,
                      const http::RequestContext& ctx) const;
  std::optional<std::string> Pass(const NodeConfig& config, const std::string& stream,
                                  const std::string& group) const;
  bool Overloaded(const NodeConfig& config, bool already_counted);
  // The next position of the backup rotation over `peers` of `group` (O-6).
  uint64_t NextRotation(const std::string& group, const std::vector<Usable>& peers) const;

  using SettingsMap = std::map<std::string, OttSettings>;
  Snapshot<SettingsMap> settings_;
  const std::string node_id_;
  const Snapshot<NodeConfig>* config_;
  const Clock& clock_;
  std::atomic<double> cpu_{0};
  std::atomic<uint64_t> out_kbit_{0};
  std::atomic<uint64_t> refusals_{0};
  mutable absl::Mutex mu_;
  // O-6 rotation position per (group, usable peers): masters with backups served so far.
  mutable absl::flat_hash_map<std::string, uint64_t> rotations_ ABSL_GUARDED_BY(mu_);
  // Backup sessions: (client address or /64, stream, a hash of the agent) → expiry and client;
  // and how many each client holds. One client's sessions are remembered up to
  // kMaxBackupSessionsPerClient (an office behind one NAT keeps its places) but count towards
  // the node's limit up to kCountedBackupSessionsPerClient only: one address making up user
  // agents cannot use up the limit and have other viewers refused.
  struct BackupSession {
    std::chrono::steady_clock::time_point expires;
    std::string client;
  };
  absl::flat_hash_map<std::string, BackupSession> backup_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, size_t> backup_clients_ ABSL_GUARDED_BY(mu_);
  uint64_t counted_backup_ ABSL_GUARDED_BY(mu_) = 0;  // Σ min(held, counted share) by client
  static constexpr size_t kMaxBackupSessionsPerClient = 256;
  static constexpr size_t kCountedBackupSessionsPerClient = 8;
  prometheus::Counter* refusals_counter_ = nullptr;
  metrics::LabeledCounters pass_failures_;  // by reason; counts nothing without a registry
};

}  // namespace meshwork::streamer
