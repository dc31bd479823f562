#include "common/http/router.h"

#include <algorithm>

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

void Router::Add(std::vector<Verb> methods, std::string_view pattern, Handler handler) {
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
  routes_.push_back(std::move(route));
}

void Router::AddStreaming(std::vector<Verb> methods, std::string_view pattern,
                          StreamingHandler handler) {
  Add(std::move(methods), pattern, nullptr);
  routes_.back().streaming = std::move(handler);
}

bool Router::MatchPath(const Route& route, const Parts& parts, std::vector<std::string>& params) {
  params.clear();
  if (params.capacity() < route.segments.size()) params.reserve(route.segments.size());
  size_t fixed = route.rest ? route.segments.size() - 1 : route.segments.size();
  if (route.rest ? parts.size() <= fixed : parts.size() != fixed) return false;
  for (size_t i = 0; i < fixed; ++i) {
    const std::string& seg = route.segments[i];
    if (route.captures[i]) {
      if (parts[i].empty()) return false;
      params.emplace_back(parts[i]);
    } else if (seg != parts[i]) {
      return false;
    }
  }
  if (route.rest) {
    std::string rest;
    for (size_t i = fixed; i < parts.size(); ++i) {
      if (parts[i].empty()) return false;
      if (!rest.empty()) rest.push_back('/');
      rest.append(parts[i]);
    }
    params.push_back(std::move(rest));
  }
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
  match.allow.clear();
  std::vector<std::string>& params = match.params;  // MatchPath clears it per route
  absl::InlinedVector<Verb, 8> allowed;
  Parts parts;
  SplitPath(path, parts);
  for (const Route& route : routes_) {
    if (!MatchPath(route, parts, params)) continue;
    auto takes = [&](Verb v) {
      return std::find(route.methods.begin(), route.methods.end(), v) != route.methods.end();
    };
    if (takes(method) || (method == Verb::head && takes(Verb::get))) {
      match.result = MatchResult::kFound;
      if (route.streaming) {
        match.streaming = &route.streaming;
      } else {
        match.handler = &route.handler;
      }
      return;
    }
    for (Verb v : route.methods) {
      if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) allowed.push_back(v);
    }
  }
  if (!allowed.empty()) {
    match.result = MatchResult::kNoMethod;
    for (Verb v : allowed) {
      if (!match.allow.empty()) match.allow += ", ";
      match.allow += std::string(beast_http::to_string(v));
    }
  }
  params.clear();
}

}  // namespace meshwork::http
