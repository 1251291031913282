// Status codes, the thread's last error message, the version string.
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstring>
#include <string>

#include "qgml/version.hpp"

#include "c_api_internal.hpp"
#include "qgml_c_git_revision.hpp"

namespace qgml::capi {
namespace {
thread_local std::string last_error;
}

void set_last_error(const std::string& message) { last_error = message; }
void clear_last_error() { last_error.clear(); }

void require_kokkos(const char* function) {
  if (!Kokkos::is_initialized())
    throw Failure{QGML_ERROR_RUNTIME, std::string(function) +
                                          ": Kokkos is not initialised (call qgml_initialize first, or initialise "
                                          "Kokkos in the host application)"};
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
  // Kokkos 3's OpenMP backend keeps its instance in a thread-local pointer set on the initialising
  // thread only; a kernel launched from any other thread aborts the process.
  if (!Kokkos::OpenMP::impl_is_initialized())
    throw Failure{QGML_ERROR_RUNTIME,
                  std::string(function) +
                      ": called from a thread other than the one that initialised Kokkos; the computing calls "
                      "(qgml_train, qgml_resume, qgml_evaluate, qgml_quantum_metric, qgml_dimension) must come "
                      "from that thread (c_api.h, Threads)"};
#endif
}

void require_finite_points(const void* points, std::int64_t t, int d, qgml_dtype dtype, const char* function) {
  const std::size_t count = std::size_t(t) * std::size_t(d);
  for (std::size_t i = 0; i < count; ++i) {
    const double v =
        dtype == QGML_FLOAT32 ? double(static_cast<const float*>(points)[i]) : static_cast<const double*>(points)[i];
    if (!std::isfinite(v))
      throw Failure{QGML_ERROR_INVALID_ARGUMENT, std::string(function) + ": point " + std::to_string(i / d) +
                                                     ", coordinate " + std::to_string(i % d) + " is " +
                                                     (std::isnan(v) ? "NaN" : "infinite") +
                                                     ": expected finite coordinates"};
  }
}

void require_dtype(qgml_dtype dtype, const char* function) {
  require(dtype == QGML_FLOAT64 || dtype == QGML_FLOAT32, function,
          "dtype = " + std::to_string(int(dtype)) + ": expected QGML_FLOAT64 (0) or QGML_FLOAT32 (1)");
}

void require_points(const void* points, std::int64_t t, int d, qgml_dtype dtype, const char* function) {
  require_pointer(points, function, "points");
  require(t >= 1, function, "t = " + std::to_string(t) + ": need at least one point");
  require(t <= std::int64_t(2147483647), function, "t = " + std::to_string(t) + ": more than 2^31 - 1 points");
  require(d >= 1, function, "d = " + std::to_string(d) + ": need at least one coordinate");
  require_dtype(dtype, function);
}

void copy_text(const std::string& text, char* buf, std::size_t size, std::size_t* needed, const char* function) {
  if (needed) *needed = text.size() + 1;
  require_pointer(buf, function, "buf");
  require(size >= text.size() + 1, function,
          "buf has " + std::to_string(size) + " bytes, " + std::to_string(text.size() + 1) + " needed");
  std::memcpy(buf, text.c_str(), text.size() + 1);
}

}  // namespace qgml::capi

extern "C" {

const char* qgml_last_error(void) { return qgml::capi::last_error.c_str(); }

int qgml_report_error(int status, const char* message) {
  try {
    qgml::capi::set_last_error(message ? message : "");
  } catch (...) {  // no memory for the message: the status still gets through
  }
  return status;
}

const char* qgml_version(void) {
  static const std::string v = std::string(QGML_VERSION_STRING) + " (" + QGML_GIT_REVISION + ", Kokkos " +
                               Kokkos::DefaultExecutionSpace::name() + ")";
  return v.c_str();
}

}  // extern "C"
