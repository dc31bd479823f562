// Shared by the media tests: a per-process scratch directory for ffmpeg fixtures, running a
// command for its output, writing and reading files, what ffmpeg can encode and decode.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tests/unit/temp_dir.h"

namespace meshwork::media {

// The standard output of a shell command.
inline std::string Capture(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes `data` to dir/name and returns the path.
inline std::string WriteFileIn(const std::filesystem::path& dir, const std::string& name,
                               const std::string& data) {
  std::filesystem::path path = dir / name;
  std::ofstream out(path, std::ios::binary);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  return path.string();
}

// Whether this ffmpeg has the libx265 encoder (Debian's does).
inline bool HaveX265() {
  return Capture("ffmpeg -hide_banner -encoders 2>/dev/null").find(" libx265 ") !=
         std::string::npos;
}

// What ffmpeg says when decoding the whole file (nothing when it is clean).
inline std::string DecodeErrors(const std::string& file) {
  return Capture("ffmpeg -hide_banner -v error -i " + file + " -f null - 2>&1");
}

// key=value lines of ffprobe for the first video stream of `file`.
inline std::map<std::string, std::string> ProbeVideo(const std::string& file) {
  std::string text = Capture(
      "ffprobe -v error -select_streams v:0 -show_entries "
      "stream=profile,level,width,height,r_frame_rate -of default=nw=1 " +
      file);
  std::map<std::string, std::string> kv;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return kv;
}

}  // namespace meshwork::media
