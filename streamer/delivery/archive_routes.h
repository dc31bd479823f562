// D-3…D-8: archive playback on the viewer listener (paths: streamer/archive/archive_target.h).
// Playlists are rendered from the in-memory archive index (no directory is listed per
// request); segments are opened on the disk thread pool — open and fstat can block on a
// busy disk — and sent with sendfile (Range honoured). Archive reads are class 3 (D-7):
// shed first. Bad `from`/`duration`, a duration over the stream's depth, names that are not
// the archive's own → 400 naming the problem (D-8); no file name is ever built from request
// text, only from the index's numbers and the validated stream and rendition names. D-5: a
// playlist for a period this node does not hold whole goes (302, with a pass) to the OTT
// group member covering most of it; a request that arrives with a pass is served here. On
// an edge, requests for a stream it relays and does not record go to relay::ArchiveProxy.
// Thread-safe; handlers never block.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "boost/asio/thread_pool.hpp"
#include "common/http/types.h"
#include "common/time/clock.h"
#include "streamer/archive/archive_index.h"
#include "streamer/archive/archive_target.h"
#include "streamer/archive/recorder.h"
#include "streamer/delivery/central_redirect.h"
#include "streamer/delivery/open_files.h"
#include "streamer/delivery/shedder.h"
#include "streamer/ott/ott_gate.h"
#include "streamer/relay/archive_proxy.h"
#include "streamer/store/origin_store.h"

namespace meshwork::streamer {

struct ArchiveContext {
  archive::ArchiveIndex* index = nullptr;
  archive::Recorder* recorder = nullptr;
  OriginStore* store = nullptr;  // codecs of the live renditions, for master playlists
  Shedder* shedder = nullptr;    // may be null
  boost::asio::thread_pool* disk = nullptr;
  const Clock* clock = nullptr;
  OttGate* ott = nullptr;  // D-5: the stream's group members and their ranges; may be null
  // An edge: archive requests for streams it relays (and does not record) go upstream.
  relay::Relay* relay = nullptr;         // may be null
  relay::ArchiveProxy* proxy = nullptr;  // may be null
  OpenFiles* files = nullptr;            // archived files kept open between requests; may be null
  // Z-22: a stream this node has no view of: central's Route says where to go; may be null.
  CentralRedirect* central = nullptr;
};

// The stream whose archive ServeArchive would answer `target` from here — recorded on this
// node, or relayed and proxied upstream — or nullopt when it would not (a bad target, or one
// sent to central or refused 404). A-2: the access check of an archive request is made on this
// stream, so that what is checked is what is served.
std::optional<std::string> ArchiveStreamOf(const ArchiveContext& context,
                                           const archive::ArchiveTarget& target);

// Answers an archive request (`target` is not kNotArchive).
// `carry` (A-3: "token=…" or empty) follows every URI its playlists and MPDs write.
void ServeArchive(const ArchiveContext& context, http::RequestContext& ctx,
                  const archive::ArchiveTarget& target, http::Responder responder,
                  const std::string& carry = "");

// The period's media playlist of one track (VOD when `vod`, else EVENT): one EXT-X-PROGRAM-
// DATE-TIME per segment, EXT-X-DISCONTINUITY where the recording has a gap (D-4) or the init
// changes, EXT-X-MAP for CMAF. Empty when nothing in the period is recorded.
std::string ArchiveMediaPlaylist(const archive::ArchiveIndex& index, const archive::TrackKey& track,
                                 int64_t from_ms, int64_t to_ms, bool vod,
                                 const std::string& uri_query = "");

// The period's master playlist (`target` a playlist of a stream, not of a rendition): one
// variant per recorded rendition, BANDWIDTH the peak rate over the period. For CMAF the audio
// rendition is the variants' EXT-X-MEDIA audio group (S-16a) and CODECS are given, both from
// the `live` rendition of that name when there is one, else from the archived init in force at
// the period's start under `root` (read from disk: call it on the disk pool); a rendition
// whose kind cannot be known is a variant. Empty when nothing is recorded.
std::string ArchiveMasterPlaylist(
    const archive::ArchiveIndex& index, const std::filesystem::path& root,
    const std::map<std::string, std::shared_ptr<const RenditionWindow>>& live,
    const std::string& stream, const archive::ArchiveTarget& target, int64_t to_ms,
    const std::string& uri_query = "");

}  // namespace meshwork::streamer
