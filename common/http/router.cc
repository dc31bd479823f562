#include "common/http/router.h"

#include <algorithm>

#include "absl/base/internal/raw_logging.h"

namespace meshwork::http {
namespace {

template <typename Out>
void SplitPath(std::string_view path, Out& out) {
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (true) {
    size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
}

bool IsCapture(std::string_view s) { return s.size() >= 2 && s.front() == '{' && s.back() == '}'; }

}  // namespace

void Router::Add(std::vector<Verb> methods, std::string_view pattern, Handler handler,
                 HeadGate gate) {
  Route route;
  route.methods = std::move(methods);
  std::vector<std::string_view> parts;
  SplitPath(pattern, parts);
  for (std::string_view seg : parts) {
    route.segments.emplace_back(seg);
    route.captures.push_back(IsCapture(seg));
  }
  if (!route.segments.empty()) {
    const std::string& last = route.segments.back();
    route.rest = IsCapture(last) && last.size() > 5 && last.substr(last.size() - 4) == "...}";
  }
  route.handler = std::move(handler);
  route.gate = std::move(gate);
  auto index = static_cast<uint32_t>(routes_.size());
  if (route.captures.empty() || route.captures[0]) {
    capture_first_.push_back(index);
  } else {
    by_first_[route.segments[0]].push_back(index);
  }
  routes_.push_back(std::move(route));
}

template <typename Fn>
void Router::ForCandidates(std::string_view first, Fn&& fn) const {
  static const std::vector<uint32_t> kNone;
  auto found = by_first_.find(absl::string_view(first.data(), first.size()));
  const std::vector<uint32_t>& literal = found == by_first_.end() ? kNone : found->second;
  // Merge the two ascending lists: the routes keep the order they were added in.
  size_t a = 0, b = 0;
  while (a < literal.size() || b < capture_first_.size()) {
    uint32_t next;
    if (b == capture_first_.size() || (a < literal.size() && literal[a] < capture_first_[b])) {
      next = literal[a++];
    } else {
      next = capture_first_[b++];
    }
    if (fn(routes_[next])) return;
  }
}

void Router::AddStreaming(std::vector<Verb> methods, std::string_view pattern,
                          StreamingHandler handler) {
  // The server reads GET and HEAD headers of the common form without a body parser
  // (request_head.h), which a streaming route needs.
  for (Verb m : methods) {
    ABSL_RAW_CHECK(m != Verb::get && m != Verb::head, "a streaming route for GET or HEAD");
  }
  Add(std::move(methods), pattern, nullptr);
  routes_.back().streaming = std::move(handler);
}

bool Router::MatchPath(const Route& route, const Parts& parts, std::vector<std::string>* params) {
  size_t fixed = route.rest ? route.segments.size() - 1 : route.segments.size();
  if (route.rest ? parts.size() <= fixed : parts.size() != fixed) return false;
  // Captures are assigned over the strings `params` already holds (their capacity reused: a
  // connection matches every request into one Match); the vector is cut to size at the end.
  size_t n = 0;
  auto put = [&](std::string_view value) {
    if (n < params->size()) {
      (*params)[n].assign(value.data(), value.size());
    } else {
      params->emplace_back(value);
    }
    ++n;
  };
  for (size_t i = 0; i < fixed; ++i) {
    const std::string& seg = route.segments[i];
    if (route.captures[i]) {
      if (parts[i].empty()) return false;
      if (params) put(parts[i]);
    } else if (seg != parts[i]) {
      return false;
    }
  }
  if (route.rest) {
    for (size_t i = fixed; i < parts.size(); ++i) {
      if (parts[i].empty()) return false;
    }
    // The parts are views into one path, '/' between them: the rest is that stretch of it.
    const char* begin = parts[fixed].data();
    const char* end = parts.back().data() + parts.back().size();
    if (params) put(std::string_view(begin, static_cast<size_t>(end - begin)));
  }
  if (params) params->resize(n);
  return true;
}

Router::Match Router::Find(Verb method, std::string_view path) const {
  Match match;
  Find(method, path, match);
  return match;
}

void Router::Find(Verb method, std::string_view path, Match& match) const {
  match.result = MatchResult::kNoPath;
  match.handler = nullptr;
  match.streaming = nullptr;
  match.gate = nullptr;
  match.allow.clear();
  Parts parts;
  SplitPath(path, parts);
  auto takes = [](const Route& route, Verb v) {
    return std::find(route.methods.begin(), route.methods.end(), v) != route.methods.end();
  };
  // The first route that takes the method and matches the path wins; its captures are the
  // only ones made.
  ForCandidates(parts[0], [&](const Route& route) {
    if (!takes(route, method) && !(method == Verb::head && takes(route, Verb::get))) return false;
    if (!MatchPath(route, parts, &match.params)) return false;
    match.result = MatchResult::kFound;
    if (route.streaming) {
      match.streaming = &route.streaming;
    } else {
      match.handler = &route.handler;
    }
    if (route.gate) match.gate = &route.gate;
    return true;
  });
  if (match.result == MatchResult::kFound) return;
  match.params.clear();
  // None: the methods of the routes whose path matches make the Allow field of a 405.
  absl::InlinedVector<Verb, 8> allowed;
  ForCandidates(parts[0], [&](const Route& route) {
    if (!MatchPath(route, parts, nullptr)) return false;
    for (Verb v : route.methods) {
      if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) allowed.push_back(v);
    }
    return false;
  });
  if (!allowed.empty()) {
    match.result = MatchResult::kNoMethod;
    for (Verb v : allowed) {
      if (!match.allow.empty()) match.allow += ", ";
      match.allow += std::string(beast_http::to_string(v));
    }
  }
}

}  // namespace meshwork::http
