#include "streamer/rtmp/amf0.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace meshwork::rtmp {
namespace {

enum Marker : uint8_t {
  kNumberMarker = 0x00,
  kBooleanMarker = 0x01,
  kStringMarker = 0x02,
  kObjectMarker = 0x03,
  kMovieClipMarker = 0x04,
  kNullMarker = 0x05,
  kUndefinedMarker = 0x06,
  kReferenceMarker = 0x07,
  kEcmaArrayMarker = 0x08,
  kObjectEndMarker = 0x09,
  kStrictArrayMarker = 0x0A,
  kDateMarker = 0x0B,
  kLongStringMarker = 0x0C,
  kUnsupportedMarker = 0x0D,
  kRecordSetMarker = 0x0E,
  kXmlDocumentMarker = 0x0F,
  kTypedObjectMarker = 0x10,
  kAvmPlusMarker = 0x11,
};

// A human name for a marker this decoder refuses, for the error message.
const char* RefusedMarkerName(uint8_t marker) {
  switch (marker) {
    case kMovieClipMarker:
      return "movieclip";
    case kReferenceMarker:
      return "reference";
    case kObjectEndMarker:
      return "object-end outside an object";
    case kUnsupportedMarker:
      return "unsupported";
    case kRecordSetMarker:
      return "recordset";
    case kXmlDocumentMarker:
      return "XML document";
    case kTypedObjectMarker:
      return "typed object";
    case kAvmPlusMarker:
      return "AVM+ switch";
    default:
      return "unknown";
  }
}

// Reads one message. Every read checks the remaining length first; `values_` counts every
// value decoded so far (nested ones included) against kAmf0MaxValues.
class Decoder {
 public:
  explicit Decoder(std::span<const uint8_t> data) : data_(data) {}

  absl::StatusOr<std::vector<Amf0Value>> DecodeAll() {
    std::vector<Amf0Value> values;
    while (pos_ < data_.size()) {
      Amf0Value value;
      if (absl::Status s = DecodeValue(0, value); !s.ok()) return s;
      values.push_back(std::move(value));
    }
    return values;
  }

 private:
  size_t Remaining() const { return data_.size() - pos_; }

  absl::Status Error(size_t offset, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat("AMF0: ", what, " at offset ", offset));
  }
  absl::Status Truncated(const char* what) const {
    return Error(pos_, absl::StrCat("truncated ", what, " (", Remaining(), " bytes left)"));
  }

  uint64_t ReadBe(size_t n) {  // the caller has checked Remaining() >= n
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | data_[pos_ + i];
    pos_ += n;
    return v;
  }

  absl::Status ReadBytes(size_t n, const char* what, std::string& out) {
    if (Remaining() < n) return Truncated(what);
    out.assign(reinterpret_cast<const char*>(data_.data() + pos_), n);
    pos_ += n;
    return absl::OkStatus();
  }

  // One value starting with its marker. `depth` is the number of containers around it.
  absl::Status DecodeValue(int depth, Amf0Value& value) {
    const size_t start = pos_;
    if (Remaining() < 1) return Truncated("value");
    if (++values_ > kAmf0MaxValues) {
      return Error(start, absl::StrCat("more than ", kAmf0MaxValues, " values"));
    }
    const uint8_t marker = data_[pos_++];
    switch (marker) {
      case kNumberMarker:
      case kDateMarker: {
        const bool date = marker == kDateMarker;
        if (Remaining() < (date ? 10u : 8u)) return Truncated(date ? "date" : "number");
        value.type = date ? Amf0Value::Type::kDate : Amf0Value::Type::kNumber;
        value.number = std::bit_cast<double>(ReadBe(8));
        if (date) pos_ += 2;  // the time zone, which AMF0 says to ignore
        return absl::OkStatus();
      }
      case kBooleanMarker:
        if (Remaining() < 1) return Truncated("boolean");
        value.type = Amf0Value::Type::kBoolean;
        value.boolean = data_[pos_++] != 0;
        return absl::OkStatus();
      case kStringMarker:
      case kLongStringMarker: {
        const size_t width = marker == kStringMarker ? 2 : 4;
        if (Remaining() < width) return Truncated("string length");
        value.type = Amf0Value::Type::kString;
        return ReadBytes(ReadBe(width), "string", value.string);
      }
      case kNullMarker:
        value.type = Amf0Value::Type::kNull;
        return absl::OkStatus();
      case kUndefinedMarker:
        value.type = Amf0Value::Type::kUndefined;
        return absl::OkStatus();
      case kObjectMarker:
      case kEcmaArrayMarker: {
        if (depth >= kAmf0MaxDepth) {
          return Error(start, absl::StrCat("nesting deeper than ", kAmf0MaxDepth));
        }
        if (marker == kEcmaArrayMarker) {
          if (Remaining() < 4) return Truncated("ECMA array count");
          pos_ += 4;  // a hint only: the properties end at the object-end marker
          value.type = Amf0Value::Type::kEcmaArray;
        } else {
          value.type = Amf0Value::Type::kObject;
        }
        return DecodeProperties(depth + 1, value);
      }
      case kStrictArrayMarker: {
        if (depth >= kAmf0MaxDepth) {
          return Error(start, absl::StrCat("nesting deeper than ", kAmf0MaxDepth));
        }
        if (Remaining() < 4) return Truncated("strict array count");
        const uint64_t count = ReadBe(4);
        // Every element takes at least one byte, and each one counts against the limit:
        // refuse a count that cannot be honest before reserving anything for it.
        if (count > Remaining() || count > kAmf0MaxValues - values_) {
          return Error(start, absl::StrCat("strict array of ", count, " elements with ",
                                           Remaining(), " bytes left"));
        }
        value.type = Amf0Value::Type::kArray;
        value.elements.reserve(count);
        for (uint64_t i = 0; i < count; ++i) {
          Amf0Value element;
          if (absl::Status s = DecodeValue(depth + 1, element); !s.ok()) return s;
          value.elements.push_back(std::move(element));
        }
        return absl::OkStatus();
      }
      default:
        return Error(start, absl::StrFormat("unsupported marker 0x%02X (%s)", marker,
                                            RefusedMarkerName(marker)));
    }
  }

  // Key/value pairs up to an empty key and the object-end marker. An empty key that is the
  // last thing in the input also ends the container (some encoders leave out the marker).
  absl::Status DecodeProperties(int depth, Amf0Value& value) {
    while (true) {
      if (Remaining() < 2) return Truncated("property name length");
      const size_t key_length = ReadBe(2);
      if (key_length == 0) {
        if (Remaining() == 0) return absl::OkStatus();  // the lenient end
        if (data_[pos_] != kObjectEndMarker) {
          return Error(pos_, absl::StrFormat("empty property name followed by 0x%02X, not "
                                             "the object-end marker",
                                             data_[pos_]));
        }
        ++pos_;
        return absl::OkStatus();
      }
      std::string key;
      if (absl::Status s = ReadBytes(key_length, "property name", key); !s.ok()) return s;
      Amf0Value property;
      if (absl::Status s = DecodeValue(depth, property); !s.ok()) return s;
      value.properties.emplace_back(std::move(key), std::move(property));
    }
  }

  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  size_t values_ = 0;
};

void PutBe(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>(v >> (8 * i)));
}

void PutDouble(std::string& out, double v) { PutBe(out, std::bit_cast<uint64_t>(v), 8); }

// A property name: AMF0 has only a 16-bit length for it, so a longer name is cut short.
void PutKey(std::string& out, const std::string& key) {
  const size_t n = std::min<size_t>(key.size(), std::numeric_limits<uint16_t>::max());
  PutBe(out, n, 2);
  out.append(key, 0, n);
}

void PutProperties(std::string& out, const Amf0Value& value) {
  for (const auto& [key, property] : value.properties) {
    PutKey(out, key);
    EncodeAmf0(property, out);
  }
  out.append("\x00\x00\x09", 3);
}

}  // namespace

Amf0Value Amf0Value::Number(double v) {
  Amf0Value value;
  value.type = Type::kNumber;
  value.number = v;
  return value;
}

Amf0Value Amf0Value::Boolean(bool v) {
  Amf0Value value;
  value.type = Type::kBoolean;
  value.boolean = v;
  return value;
}

Amf0Value Amf0Value::String(std::string v) {
  Amf0Value value;
  value.type = Type::kString;
  value.string = std::move(v);
  return value;
}

Amf0Value Amf0Value::Null() { return Amf0Value(); }

Amf0Value Amf0Value::Object(std::vector<std::pair<std::string, Amf0Value>> properties) {
  Amf0Value value;
  value.type = Type::kObject;
  value.properties = std::move(properties);
  return value;
}

const Amf0Value* Amf0Value::Find(std::string_view key) const {
  if (type != Type::kObject && type != Type::kEcmaArray) return nullptr;
  for (const auto& [name, value] : properties) {
    if (name == key) return &value;
  }
  return nullptr;
}

std::string Amf0Value::StringOr(std::string_view key, std::string fallback) const {
  const Amf0Value* value = Find(key);
  if (value == nullptr || value->type != Type::kString) return fallback;
  return value->string;
}

double Amf0Value::NumberOr(std::string_view key, double fallback) const {
  const Amf0Value* value = Find(key);
  if (value == nullptr || value->type != Type::kNumber) return fallback;
  return value->number;
}

absl::StatusOr<std::vector<Amf0Value>> DecodeAmf0(std::span<const uint8_t> data) {
  return Decoder(data).DecodeAll();
}

void EncodeAmf0(const Amf0Value& value, std::string& out) {
  switch (value.type) {
    case Amf0Value::Type::kNumber:
      out.push_back(static_cast<char>(kNumberMarker));
      PutDouble(out, value.number);
      return;
    case Amf0Value::Type::kBoolean:
      out.push_back(static_cast<char>(kBooleanMarker));
      out.push_back(value.boolean ? 1 : 0);
      return;
    case Amf0Value::Type::kString:
      if (value.string.size() <= std::numeric_limits<uint16_t>::max()) {
        out.push_back(static_cast<char>(kStringMarker));
        PutBe(out, value.string.size(), 2);
      } else {
        out.push_back(static_cast<char>(kLongStringMarker));
        PutBe(out, value.string.size(), 4);
      }
      out.append(value.string);
      return;
    case Amf0Value::Type::kObject:
      out.push_back(static_cast<char>(kObjectMarker));
      PutProperties(out, value);
      return;
    case Amf0Value::Type::kNull:
      out.push_back(static_cast<char>(kNullMarker));
      return;
    case Amf0Value::Type::kUndefined:
      out.push_back(static_cast<char>(kUndefinedMarker));
      return;
    case Amf0Value::Type::kEcmaArray:
      out.push_back(static_cast<char>(kEcmaArrayMarker));
      PutBe(out, value.properties.size(), 4);
      PutProperties(out, value);
      return;
    case Amf0Value::Type::kArray:
      out.push_back(static_cast<char>(kStrictArrayMarker));
      PutBe(out, value.elements.size(), 4);
      for (const Amf0Value& element : value.elements) EncodeAmf0(element, out);
      return;
    case Amf0Value::Type::kDate:
      out.push_back(static_cast<char>(kDateMarker));
      PutDouble(out, value.number);
      out.append("\x00\x00", 2);
      return;
  }
}

}  // namespace meshwork::rtmp
