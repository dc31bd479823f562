// Shared by the media tests: a per-process scratch directory for ffmpeg fixtures, running a
// command for its output, and reading files back.
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
