// Where a test finds the source tree and this build's binaries, at run time.
//
// The test executables live in <build>/tests/; the build tree's CMakeCache.txt names its
// source tree. Paths compiled in as macros would make every test object that uses them differ
// between checkouts and miss the compiler cache in each fresh clone (M-10).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace meshwork::testing {

// <build>: the parent of the folder holding the running test executable.
inline const std::string& BuildDir() {
  static const std::string dir =
      std::filesystem::canonical("/proc/self/exe").parent_path().parent_path().string();
  return dir;
}

// The source tree this build was configured from. Aborts when the build tree has no
// CMakeCache.txt naming it: no test can run meaningfully then.
inline const std::string& SourceDir() {
  static const std::string dir = [] {
    std::ifstream in(BuildDir() + "/CMakeCache.txt");
    const std::string key = "CMAKE_HOME_DIRECTORY:INTERNAL=";
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(key, 0) == 0) return line.substr(key.size());
    }
    std::fprintf(stderr, "no CMAKE_HOME_DIRECTORY in %s/CMakeCache.txt\n", BuildDir().c_str());
    std::abort();
  }();
  return dir;
}

// A path inside the source tree, e.g. SourcePath("tests/e2e/play.mjs").
inline std::string SourcePath(const std::string& relative) { return SourceDir() + "/" + relative; }

inline std::string CentralBin() { return BuildDir() + "/central/central"; }
inline std::string StreamerBin() { return BuildDir() + "/streamer/streamer"; }
inline std::string ViewerSimBin() { return BuildDir() + "/tests/viewer_sim"; }
inline std::string ConsoleDir() { return BuildDir() + "/console"; }

}  // namespace meshwork::testing
