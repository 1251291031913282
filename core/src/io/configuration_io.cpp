#include "qgml/io/configuration_io.hpp"

#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "qgml/common/file_error.hpp"
#include "qgml/io/npy.hpp"

#include "io/json_file.hpp"

namespace qgml {

namespace {

std::string sidecar_path(const std::string& npy_path) { return npy_path.substr(0, npy_path.size() - 4) + ".json"; }

void check_npy_path(const std::string& path) {
  if (path.size() < 5 || path.compare(path.size() - 4, 4, ".npy") != 0)
    throw Error("matrix configuration path '" + path + "' must end in .npy");
}

}  // namespace

void save_matrices(const std::string& path, const HostMatrices& m, Precision precision) {
  check_npy_path(path);
  QGML_REQUIRE(m.values.size() == std::size_t(m.D) * m.N * m.N, "qgml::save_matrices: inconsistent HostMatrices");
  const std::vector<std::size_t> shape{std::size_t(m.D), std::size_t(m.N), std::size_t(m.N)};
  if (precision == Precision::double_precision) {
    write_npy(path, NpyType::complex128, shape, m.values.data());
  } else {
    std::vector<float> f(2 * m.values.size());
    for (std::size_t i = 0; i < m.values.size(); ++i) {
      f[2 * i] = static_cast<float>(m.values[i].real());
      f[2 * i + 1] = static_cast<float>(m.values[i].imag());
    }
    write_npy(path, NpyType::complex64, shape, f.data());
  }
  detail::write_json_file(sidecar_path(path),
                          {{"format", "qgml-matrix-configuration"},
                           {"version", 1},
                           {"D", m.D},
                           {"N", m.N},
                           {"precision", precision == Precision::double_precision ? "double" : "float"}});
}

HostMatrices load_matrices(const std::string& path, Precision* precision) {
  check_npy_path(path);
  const NpyArray a = read_npy(path);
  if (a.type != NpyType::complex128 && a.type != NpyType::complex64)
    throw FileError("matrix configuration '" + path + "': expected a complex128 or complex64 array, got dtype " +
                    npy_descr(a.type));
  if (a.shape.size() != 3 || a.shape[1] != a.shape[2] || a.shape[0] == 0 || a.shape[1] == 0) {
    std::string s = "(";
    for (std::size_t i = 0; i < a.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(a.shape[i]);
    throw FileError("matrix configuration '" + path + "': expected shape (D, N, N) with D, N >= 1, got " + s + ")");
  }
  if (a.shape[0] > std::size_t(INT_MAX) || a.shape[1] > std::size_t(INT_MAX))
    throw FileError("matrix configuration '" + path + "': shape (" + std::to_string(a.shape[0]) + ", " +
                    std::to_string(a.shape[1]) + ", " + std::to_string(a.shape[2]) +
                    ") is too large (D, N <= " + std::to_string(INT_MAX) + ")");
  HostMatrices m{int(a.shape[0]), int(a.shape[1]), {}};
  m.values.resize(a.count());
  if (a.type == NpyType::complex128) {
    std::memcpy(m.values.data(), a.bytes.data(), a.bytes.size());
  } else {
    for (std::size_t i = 0; i < m.values.size(); ++i) {
      float re, im;
      std::memcpy(&re, &a.bytes[8 * i], 4);
      std::memcpy(&im, &a.bytes[8 * i + 4], 4);
      m.values[i] = {re, im};
    }
  }
  if (precision) *precision = a.type == NpyType::complex128 ? Precision::double_precision : Precision::single_precision;

  const std::string json_path = sidecar_path(path);
  if (std::filesystem::exists(json_path)) {
    const std::string what = "metadata '" + json_path + "'";
    const detail::Json meta = detail::read_json_object(json_path, what);
    const auto format = meta.find("format");
    if (format == meta.end() || *format != "qgml-matrix-configuration")
      throw FileError(
          what + ": field \"format\" must be \"qgml-matrix-configuration\", got " +
          (format == meta.end() ? std::string("nothing (the field is missing)") : detail::json_text(*format)));
    for (const auto& [key, value] : {std::pair<const char*, int>{"D", m.D}, {"N", m.N}}) {
      const auto v = meta.find(key);
      if (v != meta.end() && !v->is_number_integer())
        throw FileError(what + ": field \"" + key + "\" must be an integer, got " + detail::json_text(*v));
      if (v == meta.end() || *v != value)
        throw FileError(what + ": field \"" + key + "\" is " +
                        (v == meta.end() ? std::string("missing") : detail::json_text(*v)) + " but '" + path +
                        "' holds " + std::to_string(value));
    }
  }

  for (int k = 0; k < m.D; ++k)
    for (int i = 0; i < m.N; ++i)
      for (int j = 0; j < m.N; ++j) {
        const auto v = m(k, i, j);
        if (!std::isfinite(v.real()) || !std::isfinite(v.imag()))
          throw FileError("matrix configuration '" + path + "': non-finite entry at (k, i, j) = (" + std::to_string(k) +
                          ", " + std::to_string(i) + ", " + std::to_string(j) + ")");
        const double scale = std::max(1.0, std::abs(v));
        const double tol = (a.type == NpyType::complex128 ? 1e-12 : 1e-5) * scale;
        if (std::abs(v - std::conj(m(k, j, i))) > tol)
          throw FileError("matrix configuration '" + path + "': matrix " + std::to_string(k) +
                          " is not Hermitian (entry (" + std::to_string(i) + ", " + std::to_string(j) +
                          ") differs from " + "the conjugate of (" + std::to_string(j) + ", " + std::to_string(i) +
                          "))");
      }
  return m;
}

}  // namespace qgml
