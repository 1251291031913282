// Shared by the libFuzzer targets: a scratch directory per process, and the rule every target checks:
// a reader either accepts its input or throws qgml::Error with a message. Any other exception escapes
// LLVMFuzzerTestOneInput, and libFuzzer reports it as a crash, as it does every sanitizer report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "qgml/common/error.hpp"

namespace qgml::fuzz {

inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("qgml-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(std::filesystem::temp_directory_path() / ("qgml-fuzz-" + std::to_string(::getpid())),
                                  ec);
    });
    return d;
  }();
  return dir;
}

// Writes the bytes to `path` (replacing it) and returns the path.
inline std::string write_file(const std::filesystem::path& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  out.close();
  if (!out) std::abort();  // the scratch directory itself failed: not a finding about the reader
  return path.string();
}

// Runs read(); a qgml::Error is an accepted outcome (the message must not be empty).
template <class F>
void expect_value_or_error(F&& read) {
  try {
    read();
  } catch (const qgml::Error& e) {
    if (e.what()[0] == '\0') std::abort();
  }
}

}  // namespace qgml::fuzz
