// Matrix configurations in host memory: from the caller's interleaved (re, im) arrays or the program's
// NPY files (qgml/io/configuration_io.hpp), and back.
#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <string>

#include "qgml/io/configuration_io.hpp"

#include "c_api_internal.hpp"

namespace {

using qgml::capi::require;
using qgml::capi::require_pointer;

// Interleaved (re, im) reals of the dtype -> complex<double>, and back.
void read_complex(const void* in, qgml_dtype dtype, std::size_t count, std::complex<double>* out) {
  if (dtype == QGML_FLOAT64) {
    const double* p = static_cast<const double*>(in);
    for (std::size_t i = 0; i < count; ++i) out[i] = {p[2 * i], p[2 * i + 1]};
  } else {
    const float* p = static_cast<const float*>(in);
    for (std::size_t i = 0; i < count; ++i) out[i] = {double(p[2 * i]), double(p[2 * i + 1])};
  }
}

void write_complex(const std::complex<double>* in, std::size_t count, qgml_dtype dtype, void* out) {
  if (dtype == QGML_FLOAT64) {
    double* p = static_cast<double*>(out);
    for (std::size_t i = 0; i < count; ++i) {
      p[2 * i] = in[i].real();
      p[2 * i + 1] = in[i].imag();
    }
  } else {
    float* p = static_cast<float*>(out);
    for (std::size_t i = 0; i < count; ++i) {
      p[2 * i] = float(in[i].real());
      p[2 * i + 1] = float(in[i].imag());
    }
  }
}

// Each A_k finite and Hermitian: max |A_ij - conj(A_ji)| <= tolerance * max(1, max |A_ij|).
void check_hermitian(const qgml::HostMatrices& m, double tolerance, const char* function) {
  for (int k = 0; k < m.D; ++k) {
    double scale = 1.0, worst = 0.0;
    for (int i = 0; i < m.N; ++i)
      for (int j = 0; j < m.N; ++j) {
        const std::complex<double> a = m(k, i, j);
        require(std::isfinite(a.real()) && std::isfinite(a.imag()), function,
                "matrix " + std::to_string(k) + " has a non-finite entry at (" + std::to_string(i) + ", " +
                    std::to_string(j) + ")");
        scale = std::max(scale, std::abs(a));
        worst = std::max(worst, std::abs(a - std::conj(m(k, j, i))));
      }
    require(worst <= tolerance * scale, function,
            "matrix " + std::to_string(k) + " is not Hermitian (max |A_ij - conj(A_ji)| = " + std::to_string(worst) +
                ", relative tolerance " + std::to_string(tolerance) + ")");
  }
}

}  // namespace

using qgml::capi::guarded;

extern "C" {

int qgml_model_create(int d, int n, const void* matrices, qgml_dtype dtype, qgml_model** out) {
  const char* f = "qgml_model_create";
  return guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    require_pointer(out, f, "out");
    *out = nullptr;
    require(d >= 1, f, "d = " + std::to_string(d) + ": need at least one matrix");
    require(n >= 1, f, "n = " + std::to_string(n) + ": matrices need at least one row");
    require_pointer(matrices, f, "matrices");
    qgml::capi::require_dtype(dtype, f);
    auto model = std::make_unique<qgml_model>();
    model->matrices.D = d;
    model->matrices.N = n;
    model->matrices.values.resize(std::size_t(d) * std::size_t(n) * std::size_t(n));
    read_complex(matrices, dtype, model->matrices.values.size(), model->matrices.values.data());
    check_hermitian(model->matrices, dtype == QGML_FLOAT64 ? 1e-12 : 1e-5, f);
    *out = qgml::capi::hand_out(std::move(model));
  });
}

int qgml_model_load(const char* npy_path, qgml_model** out) {
  const char* f = "qgml_model_load";
  return guarded(f, QGML_ERROR_IO, [&] {
    require_pointer(out, f, "out");
    *out = nullptr;
    require_pointer(npy_path, f, "npy_path");
    auto model = std::make_unique<qgml_model>();
    model->matrices = qgml::load_matrices(npy_path);
    *out = qgml::capi::hand_out(std::move(model));
  });
}

int qgml_model_save(const qgml_model* m, const char* npy_path, qgml_dtype dtype) {
  const char* f = "qgml_model_save";
  return guarded(f, QGML_ERROR_IO, [&] {
    qgml::capi::require_handle(m, f, "model");
    require_pointer(npy_path, f, "npy_path");
    qgml::capi::require_dtype(dtype, f);
    const std::string path = npy_path;
    require(path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0, f,
            "npy_path '" + path + "' must end in .npy");
    qgml::save_matrices(path, m->matrices,
                        dtype == QGML_FLOAT64 ? qgml::Precision::double_precision : qgml::Precision::single_precision);
  });
}

int qgml_model_shape(const qgml_model* m, int* d, int* n) {
  const char* f = "qgml_model_shape";
  return guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    qgml::capi::require_handle(m, f, "model");
    if (d) *d = m->matrices.D;
    if (n) *n = m->matrices.N;
  });
}

int qgml_model_matrices(const qgml_model* m, void* out, qgml_dtype dtype) {
  const char* f = "qgml_model_matrices";
  return guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    qgml::capi::require_handle(m, f, "model");
    require_pointer(out, f, "out");
    qgml::capi::require_dtype(dtype, f);
    write_complex(m->matrices.values.data(), m->matrices.values.size(), dtype, out);
  });
}

int qgml_model_destroy(qgml_model* m) {
  return guarded("qgml_model_destroy", QGML_ERROR_INVALID_ARGUMENT, [&] {
    if (!m) return;
    qgml::capi::unregister_handle(m, qgml::capi::HandleKind::model, "qgml_model_destroy", "model");
    delete m;
  });
}

}  // extern "C"
