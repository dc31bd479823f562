#include "common/http/gunzip.h"

#include <zlib.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace meshwork::http {

absl::StatusOr<std::string> Gunzip(std::string_view data, size_t limit) {
  z_stream zs{};
  // windowBits 15 + 16: the gzip wrapper only (not zlib's, not raw deflate).
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return absl::InternalError("inflateInit2 failed");
  std::string out;
  out.resize(std::min<size_t>(limit, std::max<size_t>(4 * data.size(), 4096)));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (true) {
    if (zs.total_out == out.size()) {
      if (out.size() >= limit) {
        // Full: one more byte would pass the limit unless the stream ends exactly here.
        char probe;
        zs.next_out = reinterpret_cast<Bytef*>(&probe);
        zs.avail_out = 1;
        rc = inflate(&zs, Z_FINISH);
        if (rc == Z_STREAM_END && zs.avail_out == 1) break;
        inflateEnd(&zs);
        if (zs.avail_out == 0) {
          return absl::ResourceExhaustedError(
              absl::StrCat("gzip body inflates past ", limit, " bytes"));
        }
        return absl::DataLossError("gzip body is truncated or corrupt");
      }
      out.resize(std::min(limit, out.size() * 2));
    }
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + zs.total_out);
    zs.avail_out = static_cast<uInt>(out.size() - zs.total_out);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) break;
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && zs.avail_out == 0) continue;  // room was the only want
    inflateEnd(&zs);
    return absl::DataLossError(
        rc == Z_BUF_ERROR ? std::string("gzip body is truncated")
                          : absl::StrCat("gzip body is corrupt: ", zs.msg ? zs.msg : "bad data"));
  }
  const size_t consumed = data.size() - zs.avail_in;
  out.resize(zs.total_out);
  inflateEnd(&zs);
  if (consumed != data.size()) return absl::DataLossError("bytes after the gzip body");
  return out;
}

}  // namespace meshwork::http
