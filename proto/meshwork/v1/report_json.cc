#include "meshwork/v1/report_json.h"

namespace meshwork::v1 {

nlohmann::json StreamsJson(const LoadReport& report) {
  nlohmann::json streams = nlohmann::json::array();
  for (const auto& s : report.streams()) {
    nlohmann::json renditions = nlohmann::json::array();
    for (const auto& r : s.renditions()) {
      renditions.push_back(
          {{"name", r.name()}, {"codecs", r.codecs()}, {"bitrate_kbit", r.bitrate_kbit()}});
    }
    nlohmann::json inputs = nlohmann::json::array();
    for (const auto& i : s.inputs()) {
      inputs.push_back(
          {{"url", i.url()},
           {"active", i.active()},
           {"bitrate_kbit", i.bitrate_kbit()},
           {"last_frame_age_s",
            i.last_frame_age_s() < 0 ? nlohmann::json() : nlohmann::json(i.last_frame_age_s())}});
    }
    streams.push_back(
        {{"name", s.name()},
         {"working", s.working()},
         {"live_window_age_s", s.live_window_age_s()},
         {"timeline_fingerprint", s.timeline_fingerprint()},
         {"play_sessions", s.play_sessions()},
         {"publish_sessions", s.publish_sessions()},
         {"active_input", s.active_input()},
         // S-5: the anchor the node dates this stream's segments with.
         {"timeline_anchor", s.has_timeline_anchor()
                                 ? nlohmann::json{{"t90k", s.timeline_anchor().t90k()},
                                                  {"wall_ms", s.timeline_anchor().wall_unix_ms()}}
                                 : nlohmann::json()},
         {"renditions", renditions},
         {"inputs", inputs}});
  }
  return streams;
}

}  // namespace meshwork::v1
