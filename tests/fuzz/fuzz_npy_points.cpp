// libFuzzer target: a NumPy .npy points file through qgml::read_points_npy and the sharded reader
// (read_points_shard, 3 ranks). Accepted data must be T x D finite values, and the shards must hold
// the same rows as the whole file.
#include <cmath>

#include "qgml/io/data_io.hpp"

#include "fuzz_common.hpp"

namespace {

void check(const qgml::HostData& d) {
  if (d.rows < 1 || d.cols < 1 || d.values.size() != std::size_t(d.rows) * std::size_t(d.cols)) std::abort();
  for (double v : d.values)
    if (!std::isfinite(v)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = qgml::fuzz::write_file(qgml::fuzz::scratch() / "points.npy", data, size);
  qgml::HostData whole;
  qgml::fuzz::expect_value_or_error([&] {
    whole = qgml::read_points_npy(path);
    check(whole);
  });
  if (whole.rows == 0) return 0;
  for (int rank = 0; rank < 3; ++rank) {
    const qgml::HostShard s = qgml::read_points_shard(path, rank, 3);
    if (s.total != whole.rows || s.first < 0 || s.first + s.data.rows > s.total) std::abort();
    if (s.data.rows > 0 && s.data.cols != whole.cols) std::abort();
    for (std::size_t i = 0; i < s.data.values.size(); ++i)
      if (s.data.values[i] != whole.values[std::size_t(s.first) * whole.cols + i]) std::abort();
  }
  return 0;
}
