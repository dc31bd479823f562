// A position in a rendition: segment `msn`, and `part` inside it (-1: the whole segment).
#pragma once

#include <cstdint>

namespace meshwork::streamer {

struct Position {
  int64_t msn = 0;
  int part = -1;
  // True when an object at `published` (the newest complete one) satisfies this position:
  // a later segment, the whole segment, or (for a part) that part or a later one of it.
  bool ReachedBy(const Position& published) const {
    if (published.msn != msn) return published.msn > msn;
    if (part < 0) return published.part < 0;
    return published.part < 0 || published.part >= part;
  }
};

}  // namespace meshwork::streamer
