// A bounded reader of ISOBMFF boxes (ISO/IEC 14496-12 §4.2) over untrusted bytes: sizes are
// checked against the parent's, nothing is allocated but the list of children. Shared by the
// init/fragment probe and the fragment demuxer. Pure and thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace meshwork::media::mp4_reader {

// A bounded big-endian reader over one box's payload.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool Has(size_t n) const { return data_.size() - pos_ >= n; }
  size_t remaining() const { return data_.size() - pos_; }
  void Skip(size_t n) { pos_ = Has(n) ? pos_ + n : data_.size(); }
  uint64_t Uint(size_t bytes) {
    if (!Has(bytes)) {
      pos_ = data_.size();
      ok_ = false;
      return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(data_[pos_ + i]);
    pos_ += bytes;
    return v;
  }
  std::string_view Rest() const { return data_.substr(pos_); }
  bool ok() const { return ok_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

struct Box {
  std::string_view type;     // four characters
  std::string_view payload;  // after the header
  size_t offset = 0;         // where the box (its header) starts in the data it was read from
};

// The boxes directly inside `data`, in order; stops at the first malformed header.
inline std::vector<Box> Children(std::string_view data) {
  std::vector<Box> out;
  size_t pos = 0;
  while (data.size() - pos >= 8 && out.size() < 1024) {
    Reader r(data.substr(pos));
    uint64_t size = r.Uint(4);
    std::string_view type = data.substr(pos + 4, 4);
    size_t header = 8;
    if (size == 1) {
      if (data.size() - pos < 16) break;
      r.Skip(4);
      size = r.Uint(8);
      header = 16;
    } else if (size == 0) {
      size = data.size() - pos;  // to the end
    }
    if (size < header || size > data.size() - pos) break;
    out.push_back({type, data.substr(pos + header, size - header), pos});
    pos += size;
  }
  return out;
}

inline std::optional<std::string_view> Child(std::string_view data, std::string_view type) {
  for (const Box& b : Children(data)) {
    if (b.type == type) return b.payload;
  }
  return std::nullopt;
}

}  // namespace meshwork::media::mp4_reader
