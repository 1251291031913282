// libFuzzer target: a NumPy .npy matrix configuration (D x N x N complex) through qgml::load_matrices,
// the reader behind --model.load, eval and every checkpoint's matrices.npy. The first input byte
// chooses whether a JSON sidecar (matrices.json, taken from the rest of the input after a byte 0xA5) is
// present too.
#include <algorithm>
#include <filesystem>

#include "qgml/io/configuration_io.hpp"

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& dir = qgml::fuzz::scratch();
  std::error_code ec;
  std::filesystem::remove(dir / "matrices.json", ec);
  std::size_t npy_size = size;
  if (size > 0 && (data[0] & 1)) {
    // NPY bytes, then a byte 0xA5, then the sidecar's text.
    const std::uint8_t* sep = std::find(data + 1, data + size, std::uint8_t(0xA5));
    npy_size = std::size_t(sep - data);
    if (sep != data + size) qgml::fuzz::write_file(dir / "matrices.json", sep + 1, std::size_t(data + size - sep - 1));
  }
  const std::string path = qgml::fuzz::write_file(dir / "matrices.npy", data + (size > 0), npy_size - (size > 0));
  qgml::fuzz::expect_value_or_error([&] {
    qgml::Precision p;
    const qgml::HostMatrices m = qgml::load_matrices(path, &p);
    QGML_FUZZ_CHECK(m.D >= 1 && m.N >= 1 && m.values.size() == std::size_t(m.D) * std::size_t(m.N) * std::size_t(m.N));
  });
  return 0;
}
