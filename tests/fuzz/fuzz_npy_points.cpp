// libFuzzer target: a NumPy .npy points file through qgml::read_points_npy and the sharded reader
// (read_points_shard, 3 ranks), checked by qgml::fuzz::check_points_reader (fuzz_common.hpp).
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return qgml::fuzz::check_points_reader("points.npy", data, size,
                                         [](const std::string& path) { return qgml::read_points_npy(path); });
}
