#include "qgml/io/configuration_io.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "qgml/common/error.hpp"
#include "qgml/io/atomic_file.hpp"
#include "qgml/io/npy.hpp"

namespace qgml {

namespace {

std::string sidecar_path(const std::string& npy_path) { return npy_path.substr(0, npy_path.size() - 4) + ".json"; }

void check_npy_path(const std::string& path) {
  if (path.size() < 5 || path.compare(path.size() - 4, 4, ".npy") != 0)
    throw Error("matrix configuration path '" + path + "' must end in .npy");
}

// The value of "key" in a flat JSON object, as text ("" when absent).
std::string json_value(const std::string& text, const std::string& key) {
  const std::string quoted = "\"" + key + "\"";
  auto p = text.find(quoted);
  if (p == std::string::npos) return "";
  p = text.find(':', p + quoted.size());
  if (p == std::string::npos) return "";
  ++p;
  while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
  std::size_t end = p;
  if (p < text.size() && text[p] == '"') {
    end = text.find('"', p + 1);
    return end == std::string::npos ? "" : text.substr(p + 1, end - p - 1);
  }
  while (end < text.size() && text[end] != ',' && text[end] != '}' &&
         !std::isspace(static_cast<unsigned char>(text[end])))
    ++end;
  return text.substr(p, end - p);
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
  std::ostringstream json;
  json << "{\n  \"format\": \"qgml-matrix-configuration\",\n  \"version\": 1,\n  \"D\": " << m.D
       << ",\n  \"N\": " << m.N << ",\n  \"precision\": \""
       << (precision == Precision::double_precision ? "double" : "float") << "\"\n}\n";
  write_file_atomically(sidecar_path(path), json.str());
}

HostMatrices load_matrices(const std::string& path, Precision* precision) {
  check_npy_path(path);
  const NpyArray a = read_npy(path);
  if (a.type != NpyType::complex128 && a.type != NpyType::complex64)
    throw Error("matrix configuration '" + path + "': expected a complex128 or complex64 array, got dtype " +
                npy_descr(a.type));
  if (a.shape.size() != 3 || a.shape[1] != a.shape[2] || a.shape[0] == 0 || a.shape[1] == 0) {
    std::string s = "(";
    for (std::size_t i = 0; i < a.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(a.shape[i]);
    throw Error("matrix configuration '" + path + "': expected shape (D, N, N) with D, N >= 1, got " + s + ")");
  }
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
  std::ifstream js(json_path);
  if (js) {
    std::stringstream buf;
    buf << js.rdbuf();
    const std::string text = buf.str();
    const std::string format = json_value(text, "format");
    if (format != "qgml-matrix-configuration")
      throw Error("metadata '" + json_path + "': field \"format\" must be \"qgml-matrix-configuration\", got \"" +
                  format + "\"");
    for (const auto& [key, value] : {std::pair<const char*, int>{"D", m.D}, {"N", m.N}}) {
      const std::string v = json_value(text, key);
      if (v != std::to_string(value))
        throw Error("metadata '" + json_path + "': field \"" + key + "\" is " + (v.empty() ? "missing" : v) + " but '" +
                    path + "' holds " + std::to_string(value));
    }
  }

  for (int k = 0; k < m.D; ++k)
    for (int i = 0; i < m.N; ++i)
      for (int j = 0; j < m.N; ++j) {
        const auto v = m(k, i, j);
        if (!std::isfinite(v.real()) || !std::isfinite(v.imag()))
          throw Error("matrix configuration '" + path + "': non-finite entry at (k, i, j) = (" + std::to_string(k) +
                      ", " + std::to_string(i) + ", " + std::to_string(j) + ")");
        const double scale = std::max(1.0, std::abs(v));
        const double tol = (a.type == NpyType::complex128 ? 1e-12 : 1e-5) * scale;
        if (std::abs(v - std::conj(m(k, j, i))) > tol)
          throw Error("matrix configuration '" + path + "': matrix " + std::to_string(k) +
                      " is not Hermitian (entry (" + std::to_string(i) + ", " + std::to_string(j) + ") differs from " +
                      "the conjugate of (" + std::to_string(j) + ", " + std::to_string(i) + "))");
      }
  return m;
}

}  // namespace qgml
