// An MSB-first bit reader with Exp-Golomb codes, for codec headers (SPS parsing).
#pragma once

#include <cstdint>
#include <string_view>

namespace meshwork::media {

// MSB-first bit reader over an RBSP. Reading past the end sets `failed` and returns 0, so a
// parser can read a whole structure and check once (it must still bound its loops).
class BitReader {
 public:
  explicit BitReader(std::string_view data) : data_(data) {}

  bool failed() const { return failed_; }
  size_t bits_left() const { return failed_ ? 0 : data_.size() * 8 - pos_; }

  uint32_t Bits(int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 1) | Bit();
    return v;
  }
  uint32_t Bit() {
    if (failed_ || pos_ >= data_.size() * 8) {
      failed_ = true;
      return 0;
    }
    uint32_t b = (static_cast<uint8_t>(data_[pos_ >> 3]) >> (7 - (pos_ & 7))) & 1;
    ++pos_;
    return b;
  }
  void Skip(size_t n) {
    if (failed_ || n > data_.size() * 8 - pos_) {
      failed_ = true;
      return;
    }
    pos_ += n;
  }
  // ue(v); values above 2^32 - 2 are malformed.
  uint32_t Ue() {
    int zeros = 0;
    while (Bit() == 0) {
      if (failed_ || ++zeros > 31) {
        failed_ = true;
        return 0;
      }
    }
    if (zeros == 0) return 0;
    uint64_t v = (uint64_t{1} << zeros) - 1 + Bits(zeros);
    if (v > 0xfffffffeu) {
      failed_ = true;
      return 0;
    }
    return static_cast<uint32_t>(v);
  }
  int32_t Se() {
    uint32_t k = Ue();
    if (k & 1) return static_cast<int32_t>((k + 1) / 2);
    return -static_cast<int32_t>(k / 2);
  }
  // ue(v) that must be at most `max`; otherwise the reader fails.
  uint32_t UeMax(uint32_t max) {
    uint32_t v = Ue();
    if (v > max) failed_ = true;
    return failed_ ? 0 : v;
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace meshwork::media
