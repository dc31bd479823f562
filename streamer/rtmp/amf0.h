// AMF0 (Adobe's Action Message Format, version 0), the encoding of RTMP command and data
// messages: `connect`, `publish`, `@setDataFrame`/`onMetaData`, and the `_result`/`onStatus`
// answers. Only what RTMP peers send is decoded: number, boolean, string, long string,
// object, null, undefined, ECMA array, strict array, date. References, XML documents,
// typed objects, movie clips and AVM+ switches are refused.
//
// Decoding is bounded: nesting up to kMaxDepth, at most kMaxValues values in one message,
// and never reads past the input. Pure functions, no state: any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace meshwork::rtmp {

struct Amf0Value {
  enum class Type {
    kNumber,
    kBoolean,
    kString,
    kObject,
    kNull,
    kUndefined,
    kEcmaArray,
    kArray,
    kDate
  };
  Type type = Type::kNull;
  double number = 0;     // kNumber, kDate (milliseconds since the epoch)
  bool boolean = false;  // kBoolean
  std::string string;    // kString (short and long strings alike)
  std::vector<std::pair<std::string, Amf0Value>> properties;  // kObject, kEcmaArray, in order
  std::vector<Amf0Value> elements;                            // kArray

  // User-provided (not `= default`) so that clang with libstdc++ 12 need not decide whether
  // the implicit one is explicit while std::pair<std::string, Amf0Value> is still being
  // instantiated (a recursive instantiation it rejects); it does what the implicit one did.
  Amf0Value() noexcept {}

  static Amf0Value Number(double v);
  static Amf0Value Boolean(bool v);
  static Amf0Value String(std::string v);
  static Amf0Value Null();
  static Amf0Value Object(std::vector<std::pair<std::string, Amf0Value>> properties);

  // The first property named `key` of an object or ECMA array; null when absent or when this
  // is not one of those.
  const Amf0Value* Find(std::string_view key) const;
  // The property's string (or number) value when present and of that type.
  std::string StringOr(std::string_view key, std::string fallback) const;
  double NumberOr(std::string_view key, double fallback) const;
};

inline constexpr int kAmf0MaxDepth = 16;
inline constexpr size_t kAmf0MaxValues = 4096;  // every value, nested ones included

// Every value in `data`, in order (a command message is a sequence: name, transaction id,
// command object, arguments). InvalidArgument naming the offset and what was wrong.
absl::StatusOr<std::vector<Amf0Value>> DecodeAmf0(std::span<const uint8_t> data);

// Appends the encoding of `value` to `out`.
void EncodeAmf0(const Amf0Value& value, std::string& out);

}  // namespace meshwork::rtmp
