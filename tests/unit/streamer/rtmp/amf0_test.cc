#include "streamer/rtmp/amf0.h"

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "tests/unit/streamer/rtmp/bytes_util.h"

namespace meshwork::rtmp {
namespace {

using test::U16;
using test::U32;
using test::U8;

using Type = Amf0Value::Type;

// Hand-built wire bytes, big-endian as AMF0 writes them.
void F64(std::string& b, double v) {
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  U32(b, static_cast<uint32_t>(bits >> 32));
  U32(b, static_cast<uint32_t>(bits));
}
void Key(std::string& b, std::string_view key) {
  U16(b, key.size());
  b.append(key);
}
void Str(std::string& b, std::string_view s) {
  U8(b, 0x02);
  Key(b, s);
}

// Decodes from an exact-size heap copy, so that a read past the end is caught by ASan.
absl::StatusOr<std::vector<Amf0Value>> Decode(const std::string& bytes) {
  const std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  return DecodeAmf0(copy);
}

std::string Encode(const Amf0Value& value) {
  std::string out;
  EncodeAmf0(value, out);
  return out;
}

// Deep equality; numbers compare by bit pattern so NaN and -0 count.
bool Same(const Amf0Value& a, const Amf0Value& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case Type::kNumber:
    case Type::kDate:
      return std::bit_cast<uint64_t>(a.number) == std::bit_cast<uint64_t>(b.number);
    case Type::kBoolean:
      return a.boolean == b.boolean;
    case Type::kString:
      return a.string == b.string;
    case Type::kObject:
    case Type::kEcmaArray:
      if (a.properties.size() != b.properties.size()) return false;
      for (size_t i = 0; i < a.properties.size(); ++i) {
        if (a.properties[i].first != b.properties[i].first ||
            !Same(a.properties[i].second, b.properties[i].second)) {
          return false;
        }
      }
      return true;
    case Type::kArray:
      if (a.elements.size() != b.elements.size()) return false;
      for (size_t i = 0; i < a.elements.size(); ++i) {
        if (!Same(a.elements[i], b.elements[i])) return false;
      }
      return true;
    case Type::kNull:
    case Type::kUndefined:
      return true;
  }
  return false;
}

Amf0Value Of(Type type) {
  Amf0Value v;
  v.type = type;
  return v;
}

// One value of every type, containers holding others, ending with a number so that no
// proper prefix of its encoding is a complete value.
Amf0Value EveryType() {
  Amf0Value date = Of(Type::kDate);
  date.number = 1700000000123.0;
  Amf0Value ecma = Of(Type::kEcmaArray);
  ecma.properties = {{"duration", Amf0Value::Number(12.5)}, {"stereo", Amf0Value::Boolean(true)}};
  Amf0Value array = Of(Type::kArray);
  array.elements = {Amf0Value::String("x"), Amf0Value::Null(), Of(Type::kUndefined)};
  Amf0Value all = Of(Type::kArray);
  all.elements = {Amf0Value::Number(-0.0),
                  Amf0Value::Boolean(false),
                  Amf0Value::String(""),
                  Amf0Value::Object({{"level", Amf0Value::String("status")},
                                     {"inner", Amf0Value::Object({})},
                                     {"meta", ecma}}),
                  array,
                  date,
                  Amf0Value::Number(std::numeric_limits<double>::infinity())};
  return all;
}

// The `connect` command as FFmpeg publishes it, built byte by byte.
std::string ConnectCommand(bool with_object_end = true) {
  std::string b;
  Str(b, "connect");
  U8(b, 0x00);
  F64(b, 1);
  U8(b, 0x03);
  Key(b, "app");
  Str(b, "live");
  Key(b, "type");
  Str(b, "nonprivate");
  Key(b, "flashVer");
  Str(b, "FMLE/3.0 (compatible; FMSc/1.0)");
  Key(b, "tcUrl");
  Str(b, "rtmp://127.0.0.1:1935/live");
  U16(b, 0);
  if (with_object_end) U8(b, 0x09);
  return b;
}

TEST_CASE("S-1 RTMP AMF0: every type survives an encode and decode round trip") {
  const Amf0Value all = EveryType();
  const Amf0Value nan = Amf0Value::Number(std::numeric_limits<double>::quiet_NaN());
  const Amf0Value long_string = Amf0Value::String(std::string(70000, 'z'));
  for (const Amf0Value& value : {all, nan, long_string, Amf0Value::Boolean(true)}) {
    auto decoded = Decode(Encode(value));
    REQUIRE(decoded.ok());
    REQUIRE(decoded->size() == 1);
    CHECK(Same(decoded->front(), value));
  }
}

TEST_CASE("S-1 RTMP AMF0: each type is encoded with its AMF0 marker and layout") {
  CHECK(Encode(Amf0Value::Number(1)) == std::string("\x00\x3F\xF0\0\0\0\0\0\0", 9));
  CHECK(Encode(Amf0Value::Boolean(true)) == std::string("\x01\x01", 2));
  CHECK(Encode(Amf0Value::String("ab")) == std::string("\x02\x00\x02"
                                                       "ab",
                                                       5));
  CHECK(Encode(Amf0Value::Null()) == std::string("\x05", 1));
  CHECK(Encode(Of(Type::kUndefined)) == std::string("\x06", 1));
  CHECK(Encode(Amf0Value::Object({{"a", Amf0Value::Null()}})) == std::string("\x03\x00\x01"
                                                                             "a\x05\x00\x00\x09",
                                                                             8));
  Amf0Value ecma = Of(Type::kEcmaArray);
  ecma.properties = {{"a", Amf0Value::Null()}};
  CHECK(Encode(ecma) == std::string("\x08\x00\x00\x00\x01\x00\x01"
                                    "a\x05\x00\x00\x09",
                                    12));
  Amf0Value array = Of(Type::kArray);
  array.elements = {Amf0Value::Null(), Amf0Value::Boolean(false)};
  CHECK(Encode(array) == std::string("\x0A\x00\x00\x00\x02\x05\x01\x00", 8));
  Amf0Value date = Of(Type::kDate);
  date.number = 1;
  CHECK(Encode(date) == std::string("\x0B\x3F\xF0\0\0\0\0\0\0\0\0", 11));

  // 65535 bytes still fit a short string; one more needs the long form.
  const std::string short_form = Encode(Amf0Value::String(std::string(65535, 'a')));
  CHECK(short_form.size() == 3 + 65535);
  CHECK(short_form.substr(0, 3) == std::string("\x02\xFF\xFF", 3));
  const std::string long_form = Encode(Amf0Value::String(std::string(65536, 'a')));
  CHECK(long_form.size() == 5 + 65536);
  CHECK(long_form.substr(0, 5) == std::string("\x0C\x00\x01\x00\x00", 5));
}

TEST_CASE("S-1 RTMP AMF0: a connect command as FFmpeg sends it decodes to name, id and object") {
  const std::string bytes = ConnectCommand();
  auto decoded = Decode(bytes);
  REQUIRE(decoded.ok());
  REQUIRE(decoded->size() == 3);
  const auto& values = *decoded;
  CHECK(values[0].type == Type::kString);
  CHECK(values[0].string == "connect");
  CHECK(values[1].type == Type::kNumber);
  CHECK(values[1].number == 1);
  const Amf0Value& command = values[2];
  REQUIRE(command.type == Type::kObject);
  CHECK(command.properties.size() == 4);
  CHECK(command.StringOr("app", "") == "live");
  CHECK(command.StringOr("type", "") == "nonprivate");
  CHECK(command.StringOr("flashVer", "") == "FMLE/3.0 (compatible; FMSc/1.0)");
  CHECK(command.StringOr("tcUrl", "") == "rtmp://127.0.0.1:1935/live");

  // Encoding the decoded values gives back the same bytes.
  std::string again;
  for (const Amf0Value& v : values) EncodeAmf0(v, again);
  CHECK(again == bytes);
}

TEST_CASE("S-1 RTMP AMF0: property lookups return the first match of the asked type") {
  Amf0Value object = Amf0Value::Object({{"n", Amf0Value::Number(7)},
                                        {"s", Amf0Value::String("one")},
                                        {"s", Amf0Value::String("two")}});
  CHECK(object.Find("s") == &object.properties[1].second);
  CHECK(object.Find("missing") == nullptr);
  CHECK(object.StringOr("s", "fb") == "one");
  CHECK(object.StringOr("n", "fb") == "fb");
  CHECK(object.NumberOr("n", -1) == 7);
  CHECK(object.NumberOr("s", -1) == -1);
  object.type = Type::kEcmaArray;
  CHECK(object.NumberOr("n", -1) == 7);
  const Amf0Value not_container = Amf0Value::String("n");
  CHECK(not_container.Find("n") == nullptr);
  CHECK(not_container.StringOr("n", "fb") == "fb");
}

TEST_CASE("S-1 RTMP AMF0: an ECMA array is read to its end marker whatever its count says") {
  for (uint32_t count : {0u, 1u, 5u, 0xFFFFFFFFu}) {
    std::string b;
    U8(b, 0x08);
    U32(b, count);
    Key(b, "width");
    U8(b, 0x00);
    F64(b, 1280);
    Key(b, "height");
    U8(b, 0x00);
    F64(b, 720);
    U16(b, 0);
    U8(b, 0x09);
    Str(b, "after");
    auto decoded = Decode(b);
    REQUIRE(decoded.ok());
    REQUIRE(decoded->size() == 2);
    const Amf0Value& ecma = decoded->front();
    CHECK(ecma.type == Type::kEcmaArray);
    CHECK(ecma.properties.size() == 2);
    CHECK(ecma.NumberOr("height", 0) == 720);
    CHECK(decoded->back().string == "after");
  }
}

TEST_CASE("S-1 RTMP AMF0: an object ending at the end of input after an empty key is accepted") {
  auto decoded = Decode(ConnectCommand(/*with_object_end=*/false));
  REQUIRE(decoded.ok());
  REQUIRE(decoded->size() == 3);
  CHECK(decoded->back().StringOr("app", "") == "live");

  // The same leniency for an ECMA array, and only at the very end.
  std::string ecma(
      "\x08\x00\x00\x00\x00\x00\x01"
      "a\x05\x00\x00",
      11);
  auto lenient = Decode(ecma);
  REQUIRE(lenient.ok());
  CHECK(lenient->front().properties.size() == 1);
}

TEST_CASE("R-2 RTMP AMF0: an empty key followed by anything but the object-end marker is refused") {
  std::string b("\x03\x00\x00\x05", 4);
  auto decoded = Decode(b);
  REQUIRE_FALSE(decoded.ok());
  CHECK(decoded.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(decoded.status().message()), Catch::Contains("offset 3"));
}

TEST_CASE("R-2 RTMP AMF0: every truncation of a valid message is refused without overreading") {
  const std::string every = Encode(EveryType());
  for (size_t n = 1; n < every.size(); ++n) {
    INFO("prefix of " << n << " bytes out of " << every.size());
    auto decoded = Decode(every.substr(0, n));
    CHECK_FALSE(decoded.ok());
    if (!decoded.ok()) CHECK(decoded.status().code() == absl::StatusCode::kInvalidArgument);
  }
  // The connect command is a sequence: a prefix decodes only when it ends between two values
  // or right after the final empty key (the lenient end).
  const std::string connect = ConnectCommand();
  const size_t after_name = 1 + 2 + 7, after_id = after_name + 9;
  for (size_t n = 0; n <= connect.size(); ++n) {
    INFO("prefix of " << n << " bytes out of " << connect.size());
    const bool whole = n == 0 || n == after_name || n == after_id || n >= connect.size() - 1;
    CHECK(Decode(connect.substr(0, n)).ok() == whole);
  }
}

// `depth` containers, each inside the previous one; objects and strict arrays alternate.
std::string Nested(int depth) {
  Amf0Value value = Amf0Value::Null();
  for (int i = 0; i < depth; ++i) {
    if (i % 2 == 0) {
      value = Amf0Value::Object({{"k", value}});
    } else {
      Amf0Value array = Of(Type::kArray);
      array.elements = {value};
      value = array;
    }
  }
  return Encode(value);
}

TEST_CASE("R-2 RTMP AMF0: nesting deeper than kAmf0MaxDepth is refused") {
  CHECK(Decode(Nested(kAmf0MaxDepth)).ok());
  auto deeper = Decode(Nested(kAmf0MaxDepth + 1));
  REQUIRE_FALSE(deeper.ok());
  CHECK(deeper.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(deeper.status().message()), Catch::Contains("nesting"));

  // A long run of nested object markers stops at the limit, far before the end.
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep.append("\x03\x00\x01k", 4);
  CHECK_FALSE(Decode(deep).ok());
}

TEST_CASE("R-2 RTMP AMF0: a strict array claiming 2^32-1 elements is refused without allocating") {
  std::string b("\x0A\xFF\xFF\xFF\xFF", 5);
  for (int i = 0; i < 16; ++i) U8(b, 0x05);
  auto decoded = Decode(b);
  REQUIRE_FALSE(decoded.ok());
  CHECK(decoded.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(decoded.status().message()), Catch::Contains("4294967295"));
}

TEST_CASE("R-2 RTMP AMF0: more than kAmf0MaxValues values in one message are refused") {
  CHECK(Decode(std::string(kAmf0MaxValues, '\x05')).ok());
  CHECK_FALSE(Decode(std::string(kAmf0MaxValues + 1, '\x05')).ok());

  // A strict array whose count fits the bytes but not the limit is refused up front.
  std::string b;
  U8(b, 0x0A);
  U32(b, kAmf0MaxValues);
  b.append(kAmf0MaxValues, '\x05');
  CHECK_FALSE(Decode(b).ok());
  std::string fits;
  U8(fits, 0x0A);
  U32(fits, kAmf0MaxValues - 1);
  fits.append(kAmf0MaxValues - 1, '\x05');
  auto decoded = Decode(fits);
  REQUIRE(decoded.ok());
  CHECK(decoded->front().elements.size() == kAmf0MaxValues - 1);
}

TEST_CASE("R-2 RTMP AMF0: lengths that run past the input are refused") {
  CHECK_FALSE(Decode(std::string("\x02\x00\x05"
                                 "abcd",
                                 7))
                  .ok());
  CHECK_FALSE(Decode(std::string("\x0C\xFF\xFF\xFF\xFF"
                                 "abcd",
                                 9))
                  .ok());
  CHECK_FALSE(Decode(std::string("\x03\x00\x09"
                                 "app",
                                 6))
                  .ok());
  CHECK_FALSE(Decode(std::string("\x0B\x3F\xF0\0\0\0\0\0\0\0", 10)).ok());
  CHECK(Decode(std::string("\x02\x00\x04"
                           "abcd",
                           7))
            .ok());
}

TEST_CASE("R-2 RTMP AMF0: unsupported markers are refused with a message naming the marker") {
  for (unsigned marker : {0x04u, 0x07u, 0x09u, 0x0Du, 0x0Eu, 0x0Fu, 0x10u, 0x11u, 0x12u, 0xFFu}) {
    std::string b("\x05", 1);  // a valid null first, so the offset is 1
    U8(b, marker);
    b.append(8, '\0');
    auto decoded = Decode(b);
    INFO("marker " << marker);
    REQUIRE_FALSE(decoded.ok());
    CHECK(decoded.status().code() == absl::StatusCode::kInvalidArgument);
    char hex[8];
    std::snprintf(hex, sizeof(hex), "0x%02X", marker);
    const std::string message(decoded.status().message());
    CHECK_THAT(message, Catch::Contains(hex));
    CHECK_THAT(message, Catch::Contains("offset 1"));
  }
}

}  // namespace
}  // namespace meshwork::rtmp
