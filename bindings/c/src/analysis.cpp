// A configuration on the caller's points: evaluate (docs/math.md 3), the quantum metric (docs/math.md 5.1) and the
// dimension estimate (docs/math.md 6), by the core library's kernels on Kokkos::DefaultExecutionSpace. The
// points are wrapped as an unmanaged host View (no copy) where the execution space reads host memory;
// float32 arrays run the float instantiation.
#include "analysis/analysis.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/geometry/analyze_dimension.hpp"
#include "qgml/geometry/quantum_geometry.hpp"
#include "qgml/train/evaluate.hpp"

#include "c_api_internal.hpp"
#include "settings/config.hpp"
#include "settings/run_settings.hpp"
#include "settings_internal.hpp"

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using qgml::capi::Failure;
using qgml::capi::require;
using qgml::capi::require_pointer;

template <class T>
using HostArray = Kokkos::View<T, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// f(points): the caller's T x D array as a View the execution space reads (one copy where it cannot
// read host memory).
template <class Real, class F>
void with_points(const Exec& exec, const void* points, std::int64_t t, int d, F&& f) {
  // Non-const for the kernels' signatures (analyze_dimension mirrors its points); they only read them.
  const HostArray<Real**> host(const_cast<Real*>(static_cast<const Real*>(points)), std::size_t(t), std::size_t(d));
  if constexpr (Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible) {
    f(host);
  } else {
    qgml::RealMatrix<Real, Exec::memory_space> device(Kokkos::ViewAllocateWithoutInitializing("qgml::c_api::points"),
                                                      std::size_t(t), std::size_t(d));
    Kokkos::deep_copy(exec, device, host);
    f(device);
  }
}

void check_model_points(const qgml_model* m, const void* points, std::int64_t t, int d, qgml_dtype dtype,
                        const char* f) {
  qgml::capi::require_handle(m, f, "model");
  qgml::capi::require_points(points, t, d, dtype, f);
  qgml::capi::require_finite_points(points, t, d, dtype, f);
  require(d == m->matrices.D, f,
          "the points have d = " + std::to_string(d) + " coordinates, the model D = " + std::to_string(m->matrices.D));
  qgml::capi::require_kokkos(f);
}

// Runs body<float> or body<double> as the dtype says.
template <class Body>
void dispatch(qgml_dtype dtype, Body&& body) {
  if (dtype == QGML_FLOAT32)
    body(float{});
  else
    body(double{});
}

int default_chunk() { return int(std::stol(qgml::app::schema_default("analysis.chunk"))); }

// The pre-flight check of qgml train and qgml estimate (qgml::app::check_analysis_needs) for an analysis
// of t points in chunks of `chunk`: refused with a message before the model goes to the device.
template <class Real>
void check_needs(const qgml_model* m, const qgml::GeometrySettings& settings, int chunk, std::int64_t t, int d,
                 const char* f, const std::string& kernel_setting, const std::string& chunk_setting) {
  qgml::app::AnalysisPreflight p;
  p.what = f;
  p.refusal = "refused before any work";
  p.kernel_setting = kernel_setting;
  p.chunk_setting = chunk_setting;
  p.beside = "points and matrices";
  const int n = m->matrices.N;
  const double own =
      Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible ? 0.0 : double(t) * d * sizeof(Real);
  qgml::app::check_analysis_needs<Real, Exec>(settings, chunk, t, 0, d, n,
                                              own + double(d + 1) * n * n * sizeof(qgml::complex_t<Real>),
                                              qgml::memory_budget(Exec()), p);
}

// The dimension analysis of qgml_dimension and qgml_dimension_error; fails with QGML_ERROR_NUMERICAL
// when the eigensolve failed at every point.
qgml::DimensionAnalysis analyze(const qgml_model* m, const qgml_settings* s, const void* points, std::int64_t t, int d,
                                qgml_dtype dtype, const char* f) {
  check_model_points(m, points, t, d, dtype, f);
  if (s) qgml::capi::require_handle(s, f, "settings");
  const qgml::app::Config c = s ? qgml::capi::resolve(*s) : qgml::app::load_config("", {});
  const qgml::app::AnalysisSection analysis = qgml::app::read_run_settings(c).analysis;
  const qgml::GeometrySettings& settings = analysis.geometry;
  qgml::DimensionAnalysis a;
  dispatch(dtype, [&](auto zero) {
    using Real = decltype(zero);
    check_needs<Real>(m, settings, analysis.chunk, t, d, f, "analysis.kernel", "analysis.chunk");
    const Exec exec;
    const auto config = qgml::to_configuration<Real>(m->matrices, exec);
    with_points<Real>(exec, points, t, d,
                      [&](const auto& x) { a = qgml::analyze_dimension(exec, config, x, settings, analysis.chunk); });
  });
  if (a.failed_points >= t)
    throw Failure{QGML_ERROR_NUMERICAL,
                  std::string(f) + ": the eigensolve failed at every point (" + std::to_string(t) + ")"};
  return a;
}

}  // namespace

using qgml::capi::guarded;

extern "C" {

int qgml_evaluate(const qgml_model* m, const void* points, int64_t t, int d, qgml_dtype dtype, double w, void* xbar,
                  void* sigma2, void* energy, double* loss) {
  const char* f = "qgml_evaluate";
  return guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    check_model_points(m, points, t, d, dtype, f);
    require(std::isfinite(w) && w >= 0, f, "w = " + std::to_string(w) + ": expected a finite number >= 0");
    dispatch(dtype, [&](auto zero) {
      using Real = decltype(zero);
      const Exec exec;
      const auto config = qgml::to_configuration<Real>(m->matrices, exec);
      qgml::LossSettings settings;
      settings.w = w;
      with_points<Real>(exec, points, t, d, [&](const auto& x) {
        const auto e = qgml::evaluate(exec, config, x, settings);
        if (xbar)
          Kokkos::deep_copy(exec, HostArray<Real**>(static_cast<Real*>(xbar), std::size_t(t), std::size_t(d)), e.xbar);
        if (sigma2) Kokkos::deep_copy(exec, HostArray<Real*>(static_cast<Real*>(sigma2), std::size_t(t)), e.sigma2);
        if (energy) Kokkos::deep_copy(exec, HostArray<Real*>(static_cast<Real*>(energy), std::size_t(t)), e.energy);
        qgml::fence(exec, "qgml::c_api::evaluate: outputs on the host");
        if (loss) *loss = e.loss;
        if (e.eigh_failures >= t)
          throw Failure{QGML_ERROR_NUMERICAL, std::string(f) + ": the eigensolve failed at every point (" +
                                                  std::to_string(t) +
                                                  "); the points or the matrices are likely "
                                                  "of an extreme scale"};
        if (!std::isfinite(e.loss))
          throw Failure{QGML_ERROR_NUMERICAL, std::string(f) + ": the loss is not finite (" +
                                                  std::to_string(e.eigh_failures) + " of " + std::to_string(t) +
                                                  " points failed)"};
      });
    });
  });
}

int qgml_quantum_metric(const qgml_model* m, const void* points, int64_t t, int d, qgml_dtype dtype, void* metric,
                        void* eigenvalues) {
  const char* f = "qgml_quantum_metric";
  return guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    check_model_points(m, points, t, d, dtype, f);
    dispatch(dtype, [&](auto zero) {
      using Real = decltype(zero);
      qgml::GeometrySettings settings;  // the quantum metric
      const int chunk = int(std::min<std::int64_t>(t, default_chunk()));
      check_needs<Real>(m, settings, chunk, t, d, f, "", "t (points per call)");
      const Exec exec;
      const auto config = qgml::to_configuration<Real>(m->matrices, exec);
      qgml::QuantumGeometry<Real, Exec> geometry(d, m->matrices.N, chunk, settings);
      auto ev = Kokkos::create_mirror_view(Kokkos::HostSpace(), geometry.eigenvalues());
      const HostArray<Real***> g(static_cast<Real*>(metric), metric ? std::size_t(t) : 0, std::size_t(d),
                                 std::size_t(d));
      Real* const lambda = static_cast<Real*>(eigenvalues);
      with_points<Real>(exec, points, t, d, [&](const auto& x) {
        for (std::int64_t start = 0; start < t; start += chunk) {
          const int count = int(std::min<std::int64_t>(chunk, t - start));
          const auto range = Kokkos::make_pair(std::size_t(start), std::size_t(start + count));
          geometry.compute(exec, config, Kokkos::subview(x, range, Kokkos::ALL), settings);
          if (metric)
            Kokkos::deep_copy(
                exec, Kokkos::subview(g, range, Kokkos::ALL, Kokkos::ALL),
                Kokkos::subview(geometry.metric(), Kokkos::make_pair(0, count), Kokkos::ALL, Kokkos::ALL));
          if (lambda) Kokkos::deep_copy(exec, ev, geometry.eigenvalues());
          qgml::fence(exec, "qgml::c_api::quantum_metric: chunk on the host");
          if (lambda)  // descending in the library, ascending here
            for (int p = 0; p < count; ++p)
              for (int k = 0; k < d; ++k) lambda[(std::size_t(start) + p) * d + k] = ev(p, d - 1 - k);
        }
      });
    });
  });
}

int qgml_dimension(const qgml_model* m, const qgml_settings* s, const void* points, int64_t t, int d, qgml_dtype dtype,
                   int* dimension, int* per_point, int* uncertain) {
  const char* f = "qgml_dimension";
  return guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    require_pointer(dimension, f, "dimension");
    const qgml::DimensionAnalysis a = analyze(m, s, points, t, d, dtype, f);
    *dimension = a.summary.mode;
    if (uncertain) *uncertain = a.summary.uncertain ? 1 : 0;
    if (per_point) std::copy(a.dimension.begin(), a.dimension.end(), per_point);
  });
}

int qgml_dimension_error(const qgml_model* m, const qgml_settings* s, const void* points, int64_t t, int d,
                         qgml_dtype dtype, int* dimension, double* error, int* low, int* high) {
  const char* f = "qgml_dimension_error";
  return guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    const qgml::DimensionAnalysis a = analyze(m, s, points, t, d, dtype, f);
    if (dimension) *dimension = a.summary.mode;
    if (error) *error = a.summary.interval.error;
    if (low) *low = a.summary.interval.low;
    if (high) *high = a.summary.interval.high;
  });
}

}  // extern "C"
