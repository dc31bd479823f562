// Maps (method, path) to a handler. Patterns are '/'-separated; a `{name}` segment captures
// one path segment, a final `{name...}` captures the rest (one or more segments, joined by
// '/'). Routes are tried in the order they were added; the first match wins. Built once
// before the server starts, then read-only (safe to share between workers).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "common/http/types.h"

namespace meshwork::http {

class Router {
 public:
  // `methods` lists the verbs the handler takes; HEAD is accepted wherever GET is. `gate`,
  // when set, sees the header of a request with a body before the body is read (HeadGate).
  void Add(std::vector<Verb> methods, std::string_view pattern, Handler handler,
           HeadGate gate = nullptr);
  // A route whose request body is handed over in chunks as it arrives (see BodyReader); for
  // methods with a body only (GET or HEAD crashes: their common headers are read without a
  // body parser, request_head.h).
  void AddStreaming(std::vector<Verb> methods, std::string_view pattern, StreamingHandler handler);

  enum class MatchResult { kFound, kNoPath, kNoMethod };
  struct Match {
    MatchResult result = MatchResult::kNoPath;
    const Handler* handler = nullptr;             // set for plain routes
    const StreamingHandler* streaming = nullptr;  // set for streaming routes
    const HeadGate* gate = nullptr;               // the route's, when it has one
    std::vector<std::string> params;
    std::string allow;  // for kNoMethod: the Allow header value
  };
  Match Find(Verb method, std::string_view path) const;
  // The same into `out`, whose `params` keep their capacity (a connection reuses one Match).
  void Find(Verb method, std::string_view path, Match& out) const;

 private:
  // A request path's segments: split once per Find, not once per route tried.
  using Parts = absl::InlinedVector<std::string_view, 12>;
  struct Route {
    std::vector<Verb> methods;
    std::vector<std::string> segments;
    std::vector<bool> captures;  // segments[i] is a `{name}`
    bool rest = false;           // last segment is {name...}
    Handler handler;
    StreamingHandler streaming;
    HeadGate gate;
  };
  // Whether `route` matches the path split into `parts`; its captures then go to `params`
  // (when not null; on no match its content is unspecified).
  static bool MatchPath(const Route& route, const Parts& parts, std::vector<std::string>* params);
  // Calls fn(route) for each route that may match a path whose first segment is `first` (those
  // whose first pattern segment is that literal or a capture), in the order they were added,
  // until fn returns true.
  template <typename Fn>
  void ForCandidates(std::string_view first, Fn&& fn) const;

  std::vector<Route> routes_;
  // Indexes into routes_, ascending: by a literal first segment, and those starting with a
  // capture. A central has dozens of API routes before the viewers' catch-all: a request is
  // matched against the few its first segment allows, not all of them.
  absl::flat_hash_map<std::string, std::vector<uint32_t>> by_first_;
  std::vector<uint32_t> capture_first_;
};

}  // namespace meshwork::http
