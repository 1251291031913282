// Shared by the libFuzzer targets: a scratch directory per process, and the rule every target checks:
// a reader either accepts its input or throws qgml::Error with a message. Any other exception escapes
// LLVMFuzzerTestOneInput, and libFuzzer reports it as a crash, as it does every sanitizer report.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "qgml/common/error.hpp"
#include "qgml/io/data_io.hpp"

// A rule of the target: when `condition` is false, the input is a finding (printed, then abort(), which
// libFuzzer records as a crash with the input that caused it).
#define QGML_FUZZ_CHECK(condition)                                                                  \
  do {                                                                                              \
    if (!(condition)) {                                                                             \
      std::fprintf(stderr, "qgml fuzz check failed: %s (%s:%d)\n", #condition, __FILE__, __LINE__); \
      std::abort();                                                                                 \
    }                                                                                               \
  } while (0)

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
    QGML_FUZZ_CHECK(e.what()[0] != '\0');
  }
}

// A points file (`name` in the scratch directory, holding the input) through `read` (read_points_csv or
// read_points_npy) and the sharded reader (read_points_shard, 3 ranks): accepted data must be T x D
// finite values, and the shards must hold the same rows as the whole file.
template <class Read>
int check_points_reader(const char* name, const std::uint8_t* data, std::size_t size, Read read) {
  const std::string path = write_file(scratch() / name, data, size);
  HostData whole;
  expect_value_or_error([&] {
    whole = read(path);
    QGML_FUZZ_CHECK(whole.rows >= 1 && whole.cols >= 1 &&
                    whole.values.size() == std::size_t(whole.rows) * std::size_t(whole.cols));
    for (double v : whole.values) QGML_FUZZ_CHECK(std::isfinite(v));
  });
  if (whole.rows == 0) return 0;
  for (int rank = 0; rank < 3; ++rank) {
    const HostShard s = read_points_shard(path, rank, 3);
    QGML_FUZZ_CHECK(s.total == whole.rows && s.first >= 0 && s.first + s.data.rows <= s.total);
    QGML_FUZZ_CHECK(s.data.rows == 0 || s.data.cols == whole.cols);
    for (std::size_t i = 0; i < s.data.values.size(); ++i)
      QGML_FUZZ_CHECK(s.data.values[i] == whole.values[std::size_t(s.first) * whole.cols + i]);
  }
  return 0;
}

}  // namespace qgml::fuzz
