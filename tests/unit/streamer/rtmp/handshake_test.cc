#include "streamer/rtmp/handshake.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace meshwork::rtmp {
namespace {

using ByteVec = std::vector<uint8_t>;

constexpr uint32_t kServerTime = 0xA0B0C0D0;

ByteVec RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  ByteVec out(n);
  for (uint8_t& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

ByteVec HexBytes(const std::string& hex) {
  ByteVec out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

uint32_t ReadBe32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// A C1 with the given time and version fields and random bytes after them.
ByteVec MakeC1(uint32_t time, uint32_t version, uint32_t seed) {
  ByteVec c1 = RandomBytes(kHandshakeSize, seed);
  for (int i = 0; i < 4; ++i) {
    c1[i] = static_cast<uint8_t>(time >> (24 - 8 * i));
    c1[4 + i] = static_cast<uint8_t>(version >> (24 - 8 * i));
  }
  return c1;
}

ByteVec WithC0(const ByteVec& c1, uint8_t version = 3) {
  ByteVec c0c1{version};
  c0c1.insert(c0c1.end(), c1.begin(), c1.end());
  return c0c1;
}

// Where a digest sits under `scheme`, computed here independently of the implementation.
size_t DigestOffset(const ByteVec& block, int scheme) {
  const size_t base = scheme == 0 ? 8 : 772;
  return (block[base] + block[base + 1] + block[base + 2] + block[base + 3]) % 728 + base + 4;
}

struct Answer {
  HandshakeForm form;
  ByteVec s0, s1, s2;
};

Answer Answered(const ByteVec& c1, const ByteVec& random) {
  auto answer = AnswerHandshake(WithC0(c1), kServerTime, random);
  REQUIRE(answer.ok());
  REQUIRE(answer->s0s1s2.size() == 1 + 2 * kHandshakeSize);
  const auto* p = reinterpret_cast<const uint8_t*>(answer->s0s1s2.data());
  return {answer->form, ByteVec(p, p + 1), ByteVec(p + 1, p + 1 + kHandshakeSize),
          ByteVec(p + 1 + kHandshakeSize, p + 1 + 2 * kHandshakeSize)};
}

// The simple answer: S0 3, S1 our time + zero + random, S2 = C1 with our time in 4..7.
void CheckSimpleAnswer(const Answer& a, const ByteVec& c1, const ByteVec& random) {
  CHECK(a.form == HandshakeForm::kSimple);
  CHECK(a.s0[0] == 3);
  CHECK(ReadBe32(a.s1.data()) == kServerTime);
  CHECK(ReadBe32(a.s1.data() + 4) == 0);
  CHECK(std::equal(a.s1.begin() + 8, a.s1.end(), random.begin() + 8));
  CHECK(std::equal(a.s2.begin(), a.s2.begin() + 4, c1.begin()));
  CHECK(ReadBe32(a.s2.data() + 4) == kServerTime);
  CHECK(std::equal(a.s2.begin() + 8, a.s2.end(), c1.begin() + 8));
}

TEST_CASE("S-1 RTMP handshake: a client version other than 3 is refused") {
  const ByteVec c1 = MakeC1(0, 0, 1);
  const ByteVec random = RandomBytes(kHandshakeSize, 2);
  for (uint8_t version : {0, 1, 2, 4, 6, 0x83, 0xFF}) {
    INFO("version " << int{version});
    auto answer = AnswerHandshake(WithC0(c1, version), kServerTime, random);
    REQUIRE_FALSE(answer.ok());
    CHECK(answer.status().code() == absl::StatusCode::kInvalidArgument);
  }
  CHECK(AnswerHandshake(WithC0(c1, 3), kServerTime, random).ok());
}

TEST_CASE("S-1 RTMP handshake: wrong sizes are refused") {
  const ByteVec c0c1 = WithC0(MakeC1(0, 0, 1));
  const ByteVec random = RandomBytes(kHandshakeSize, 2);
  for (size_t n : {size_t{0}, size_t{1}, kHandshakeSize, kHandshakeSize + 2}) {
    const ByteVec c0c1_sized = RandomBytes(n, 3);
    auto answer = AnswerHandshake(c0c1_sized, kServerTime, random);
    REQUIRE_FALSE(answer.ok());
    CHECK(answer.status().code() == absl::StatusCode::kInvalidArgument);
  }
  for (size_t n : {size_t{0}, kHandshakeSize - 1, kHandshakeSize + 1}) {
    auto answer = AnswerHandshake(c0c1, kServerTime, RandomBytes(n, 4));
    REQUIRE_FALSE(answer.ok());
    CHECK(answer.status().code() == absl::StatusCode::kInvalidArgument);
  }

  // The client-side helpers refuse wrong sizes and unknown schemes rather than misread.
  ByteVec c1 = MakeC1(1, 0x80000702, 5);
  SignClientC1(c1, 0);
  REQUIRE(VerifyClientDigest(c1, 0));
  const ByteVec short_c1(c1.begin(), c1.end() - 1);
  CHECK_FALSE(VerifyClientDigest(short_c1, 0));
  CHECK_FALSE(VerifyClientDigest(c1, 2));
  CHECK_FALSE(VerifyClientDigest(c1, -1));
  CHECK_FALSE(VerifyServerDigest(short_c1, 0));
  CHECK_FALSE(VerifyS2(short_c1, c1, 0));
  CHECK_FALSE(VerifyS2(c1, short_c1, 0));
  ByteVec untouched = MakeC1(1, 0x80000702, 6);
  const ByteVec before = untouched;
  SignClientC1(std::span<uint8_t>(untouched).first(kHandshakeSize - 1), 0);
  SignClientC1(untouched, 7);
  CHECK(untouched == before);
}

TEST_CASE("S-1 RTMP handshake: a simple C1 gets S0 3, our S1 and an S2 echoing C1") {
  const ByteVec c1 = MakeC1(0x01020304, 0, 7);
  const ByteVec random = RandomBytes(kHandshakeSize, 8);
  const Answer a = Answered(c1, random);
  CheckSimpleAnswer(a, c1, random);
  CHECK(a.s1.size() == kHandshakeSize);
  CHECK(a.s2.size() == kHandshakeSize);
}

TEST_CASE("S-1 RTMP handshake: the digests match an independent HMAC-SHA256 computation") {
  // C1/S1 filled with (i*7+3) mod 256; the expected values were computed with Python's hmac.
  struct Vector {
    int scheme;
    size_t offset;
    const char* client_digest;
    const char* s2_signature;  // over an S2 head filled with (i*13+1) mod 256
    const char* server_digest;
  };
  const Vector vectors[] = {
      {0, 290, "32c929c5b59c31ce670816c29d3060330ea914f85506bf3fd8db4567d7f3b798",
       "ba75a93c2e6471fc0e133aa9506fcb457d7a2136c775c2a19c5f1133c7976ab4",
       "1742eac9377b5266da983ddbb27992cac6e500b597cd7fcc4bdfa7edb22fd38a"},
      {1, 942, "3c5e9c5add8aadae7703722a468cd3db8d58961b1035d14a17fae66461306ae6",
       "b0d3555cd9c0bbd1da920df0d653aaa4438c5c2000cc19f72fa496b0eb524ff1",
       "fe6d06fdd1e460327de58ce6c5654ed187d0eeb036a5f159e14cdd29a7858cae"},
  };
  for (const Vector& v : vectors) {
    INFO("scheme " << v.scheme);
    ByteVec c1(kHandshakeSize);
    for (size_t i = 0; i < c1.size(); ++i) c1[i] = static_cast<uint8_t>(i * 7 + 3);
    ByteVec s1 = c1;
    const uint8_t client_version[4] = {0x80, 0x00, 0x07, 0x02};
    const uint8_t server_version[4] = {0x04, 0x05, 0x00, 0x01};
    std::copy(client_version, client_version + 4, c1.begin() + 4);
    std::copy(server_version, server_version + 4, s1.begin() + 4);
    REQUIRE(DigestOffset(c1, v.scheme) == v.offset);

    SignClientC1(c1, v.scheme);
    CHECK(ByteVec(c1.begin() + v.offset, c1.begin() + v.offset + 32) == HexBytes(v.client_digest));
    CHECK(VerifyClientDigest(c1, v.scheme));

    ByteVec s2(kHandshakeSize - 32);
    for (size_t i = 0; i < s2.size(); ++i) s2[i] = static_cast<uint8_t>(i * 13 + 1);
    const ByteVec signature = HexBytes(v.s2_signature);
    s2.insert(s2.end(), signature.begin(), signature.end());
    CHECK(VerifyS2(s2, c1, v.scheme));

    const ByteVec server_digest = HexBytes(v.server_digest);
    std::copy(server_digest.begin(), server_digest.end(), s1.begin() + v.offset);
    CHECK(VerifyServerDigest(s1, v.scheme));
  }
}

TEST_CASE("S-1 RTMP handshake: a C1 signed under either scheme gets a digest answer it accepts") {
  const int scheme = GENERATE(0, 1);
  // Several C1s so that the digest lands at different offsets.
  for (uint32_t seed = 10; seed < 18; ++seed) {
    INFO("scheme " << scheme << ", seed " << seed);
    ByteVec c1 = MakeC1(0x00001000, 0x80000702, seed);
    SignClientC1(c1, scheme);
    REQUIRE(VerifyClientDigest(c1, scheme));
    CHECK_FALSE(VerifyClientDigest(c1, 1 - scheme));
    const ByteVec random = RandomBytes(kHandshakeSize, seed + 100);

    const Answer a = Answered(c1, random);
    CHECK(a.form == (scheme == 0 ? HandshakeForm::kDigestScheme0 : HandshakeForm::kDigestScheme1));
    CHECK(a.s0[0] == 3);
    CHECK(ReadBe32(a.s1.data()) == kServerTime);
    CHECK(ReadBe32(a.s1.data() + 4) == 0x04050001);
    CHECK(VerifyServerDigest(a.s1, scheme));
    CHECK(VerifyS2(a.s2, c1, scheme));
    // S2 is not an echo of C1 and does not repeat S1.
    CHECK_FALSE(std::equal(a.s2.begin() + 8, a.s2.end(), c1.begin() + 8));
    CHECK_FALSE(std::equal(a.s2.begin() + 8, a.s2.begin() + 1504, a.s1.begin() + 8));

    // What a client checks fails for anything else.
    ByteVec other_c1 = MakeC1(0x00001000, 0x80000702, seed + 1000);
    SignClientC1(other_c1, scheme);
    CHECK_FALSE(VerifyS2(a.s2, other_c1, scheme));
    ByteVec bad_s2 = a.s2;
    bad_s2[100] ^= 1;
    CHECK_FALSE(VerifyS2(bad_s2, c1, scheme));
    ByteVec bad_s1 = a.s1;
    bad_s1[0] ^= 0x80;
    CHECK_FALSE(VerifyServerDigest(bad_s1, scheme));
  }
}

TEST_CASE("S-1 RTMP handshake: a C1 with a version but no valid digest gets the simple form") {
  const int scheme = GENERATE(0, 1);
  const ByteVec random = RandomBytes(kHandshakeSize, 21);

  // A corrupted digest byte.
  ByteVec corrupted = MakeC1(0x01020304, 0x80000702, 22);
  SignClientC1(corrupted, scheme);
  corrupted[DigestOffset(corrupted, scheme) + 31] ^= 0x01;
  REQUIRE_FALSE(VerifyClientDigest(corrupted, scheme));
  CheckSimpleAnswer(Answered(corrupted, random), corrupted, random);

  // A byte the digest covers, changed after signing.
  ByteVec tampered = MakeC1(0x01020304, 0x80000702, 23);
  SignClientC1(tampered, scheme);
  tampered[kHandshakeSize - 1] ^= 0x40;
  REQUIRE_FALSE(VerifyClientDigest(tampered, scheme));
  CheckSimpleAnswer(Answered(tampered, random), tampered, random);

  // Never signed at all.
  const ByteVec unsigned_c1 = MakeC1(0x01020304, 0x09007C02, 24 + scheme);
  CheckSimpleAnswer(Answered(unsigned_c1, random), unsigned_c1, random);
}

TEST_CASE("S-1 RTMP handshake: a zero version field means the simple form even with a digest") {
  ByteVec c1 = MakeC1(5, 0, 30);
  SignClientC1(c1, 1);
  REQUIRE(VerifyClientDigest(c1, 1));
  const ByteVec random = RandomBytes(kHandshakeSize, 31);
  CheckSimpleAnswer(Answered(c1, random), c1, random);
}

}  // namespace
}  // namespace meshwork::rtmp
