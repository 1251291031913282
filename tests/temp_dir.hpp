// A scratch directory for tests that write files, and whole-file reads and writes.
#pragma once

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

namespace qgml::test {

// <temp>/qgml-test-<pid>-<n>: unique within the process and across the processes CTest runs at once;
// created empty, removed with everything in it when the object goes out of scope.
struct TempDir {
  std::filesystem::path path;

  TempDir() {
    static std::atomic<int> count{0};
    path = std::filesystem::temp_directory_path() /
           ("qgml-test-" + std::to_string(::getpid()) + "-" + std::to_string(count++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path / name).string(); }

  // Writes `bytes` to the file `name` in the directory; returns its path.
  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string p = file(name);
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
};

inline std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

}  // namespace qgml::test
