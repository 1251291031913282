// Evaluate API: loss, exact gradient and per-point observables of a configuration on a data set, for
// cross-checking against other implementations (the same kernels as training, docs/math.md 3 and 4.5).
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <type_traits>

#include "qgml/train/loss_gradient.hpp"

namespace qgml {

template <class Real, class MemorySpace>
struct Evaluation {
  double loss = 0;            // mean_t (d^2 + w sigma^2) + lambda P
  double reconstruction = 0;  // mean_t d^2
  double fluctuation = 0;     // mean_t sigma^2
  double penalty = 0;         // lambda P
  long degenerate_points = 0;
  long eigh_failures = 0;
  MatrixStack<Real, MemorySpace> gradient;  // D x N x N, of the loss above
  RealMatrix<Real, MemorySpace> xbar;       // T x D
  RealVector<Real, MemorySpace> sigma2;     // T
  RealVector<Real, MemorySpace> energy;     // T: E_0
};

namespace detail {

// Rows start + t of the evaluation's xbar, sigma^2 and E_0 from row t of a chunk's xbar and terms (a
// named functor: docs/architecture.md "Host execution spaces in a CUDA build").
template <class Real, class MemorySpace, class ChunkXbar, class ChunkTerms>
struct CopyChunkObservables {
  RealMatrix<Real, MemorySpace> xbar;
  RealVector<Real, MemorySpace> sigma2, energy;
  ChunkXbar xb;
  ChunkTerms terms;
  int start = 0, d = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int t) const {
    for (int k = 0; k < d; ++k) xbar(start + t, k) = xb(t, k);
    sigma2(start + t) = terms(t, int(loss_fluctuation));
    energy(start + t) = terms(t, int(loss_energy));
  }
};

}  // namespace detail

// Processes the points in chunks of at most `chunk` (buffers sized once); one host copy at the end.
template <class Real, class ExecSpace, class PointsView>
Evaluation<Real, typename ExecSpace::memory_space> evaluate(const ExecSpace& exec,
                                                            const MatrixConfiguration<Real, ExecSpace>& config,
                                                            const PointsView& points, const LossSettings& settings,
                                                            int chunk = 25000) {
  using memory_space = typename ExecSpace::memory_space;
  const int count = static_cast<int>(points.extent(0));
  const int d = config.dimension();
  QGML_REQUIRE(count >= 1, "qgml::evaluate: no points");
  QGML_REQUIRE(chunk >= 1, "qgml::evaluate: chunk must be >= 1");
  const int c = std::min(chunk, count);
  LossGradient<Real, ExecSpace> engine(d, config.matrix_size(), c);
  Evaluation<Real, memory_space> out;
  out.xbar = RealMatrix<Real, memory_space>("qgml::evaluate::xbar", count, d);
  out.sigma2 = RealVector<Real, memory_space>("qgml::evaluate::sigma2", count);
  out.energy = RealVector<Real, memory_space>("qgml::evaluate::energy", count);
  for (int start = 0; start < count; start += c) {
    const int m = std::min(c, count - start);
    const auto pts = Kokkos::subview(points, Kokkos::make_pair(start, start + m), Kokkos::ALL);
    engine.compute(exec, config, pts, settings, Real(1) / Real(count), start > 0);
    using kernel_type = detail::CopyChunkObservables<Real, memory_space, std::decay_t<decltype(engine.xbar())>,
                                                     std::decay_t<decltype(engine.terms())>>;
    Kokkos::parallel_for("qgml::evaluate::copy_observables", Kokkos::RangePolicy<ExecSpace>(exec, 0, m),
                         kernel_type{out.xbar, out.sigma2, out.energy, engine.xbar(), engine.terms(), start, d});
  }
  engine.add_penalty(exec, config, settings);
  out.gradient =
      MatrixStack<Real, memory_space>("qgml::evaluate::gradient", d, config.matrix_size(), config.matrix_size());
  Kokkos::deep_copy(exec, out.gradient, engine.gradient());
  auto sums = Kokkos::create_mirror(engine.sums());
  Kokkos::deep_copy(exec, sums, engine.sums());
  qgml::fence(exec, "qgml::evaluate: sums on the host");
  out.loss = sums(loss_total) / count + sums(loss_penalty);
  out.reconstruction = sums(loss_reconstruction) / count;
  out.fluctuation = sums(loss_fluctuation) / count;
  out.penalty = sums(loss_penalty);
  out.degenerate_points = long(sums(loss_degenerate_points));
  out.eigh_failures = long(sums(loss_eigh_failures));
  return out;
}

}  // namespace qgml
