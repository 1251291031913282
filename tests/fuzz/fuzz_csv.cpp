// libFuzzer target: a CSV points file through qgml::read_points_csv and the sharded reader
// (read_points_shard, 3 ranks), checked by qgml::fuzz::check_points_reader (fuzz_common.hpp).
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return qgml::fuzz::check_points_reader("points.csv", data, size,
                                         [](const std::string& path) { return qgml::read_points_csv(path); });
}
