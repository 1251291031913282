// Predictions of a supervised model (docs/supervised.md, sections 1 and 11): y_hat_c(x) =
// <psi_0(x)|B_c|psi_0(x)> for the C target operators B_c, psi_0(x) the ground state of H(x) = 1/2 sum_k (A_k - x_k)^2
// of the feature matrices A_1..A_D. On host spaces for 2 <= N <= 256 one kernel per SIMD pack of points finds psi_0
// alone (ground_state/ground_state_packed.hpp: the whole spectrum at N = 2, from N = 3 the Householder reduction, E_0
// of T and inverse iteration, as the samplers' energy kernel) and forms <psi_0|B psi_0> in the lanes (for each B_c);
// elsewhere H is built for a chunk of at most max_chunk points and solved by batched_eigh. Buffers are allocated once,
// so that a trainer can predict a validation set every epoch without allocating.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/line_aligned_scratch.hpp"
#include "qgml/ground_state/ground_state_energy.hpp"
#include "qgml/ground_state/ground_state_packed.hpp"
#include "qgml/ground_state/ground_state_terms.hpp"
#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/linalg/lanes.hpp"
#include "qgml/model/hamiltonian.hpp"
#include "qgml/model/matrix_configuration.hpp"
#include "qgml/plan/kernel_rules.hpp"

namespace qgml {

namespace detail {

// The kernels of TargetPredictor (named functors: docs/architecture.md "Host execution spaces in a CUDA
// build").

// y_hat(start + t, c) = <psi|B_c|psi> = sum_i conj(psi_i) (B_c psi)_i, psi = row 0 of V(t); NaN where the
// eigensolve failed.
template <class Real, class MemorySpace, class VView, class InfoView, class OutView>
struct OperatorExpectation {
  MatrixStack<Real, MemorySpace> b;
  VView v;
  InfoView info;
  OutView y_hat;
  Real nan = 0;
  int n = 0, start = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int t) const {
    for (int c = 0; c < int(b.extent(0)); ++c) {
      Real e = 0;
      for (int i = 0; i < n; ++i) {
        complex_t<Real> beta(0);
        for (int j = 0; j < n; ++j) beta += b(c, i, j) * v(t, 0, j);
        e += v(t, 0, i).real() * beta.real() + v(t, 0, i).imag() * beta.imag();
      }
      y_hat(start + t, c) = info(t) == 0 ? e : nan;
    }
  }
};

// One SIMD pack of W points: psi_0 by the packed ground-state kernel, then <psi_0|B_c psi_0> in the lanes
// for each c (NaN where the ground state failed).
template <int W, class Real, class ExecSpace, class PointsView, class OutView>
struct PackedOperatorExpectation {
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using memory_space = typename ExecSpace::memory_space;
  using scratch_view = Kokkos::View<Real*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  typename MatrixConfiguration<Real, ExecSpace>::matrices_type a;
  typename MatrixConfiguration<Real, ExecSpace>::matrix_type sq;
  PointsView x;
  MatrixStack<Real, memory_space> b;
  OutView out;
  LineAlignedScratch<scratch_view> scratch;
  PackedGroundStateMethod method = PackedGroundStateMethod::eigendecomposition;
  int level = 0, n = 0, d = 0, count = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const PackedGroundStateScratch<W, Real> g(n, d, scratch.data(member, level));
    Real* const br = g.end;  // B psi
    Real* const bi = br + n * W;
    const int t0 = member.league_rank() * W;
    const int lanes = count - t0 < W ? count - t0 : W;
    int code[W];
    Real e0[W], emax[W], degenerate[W];
    packed_ground_state<W>(a, sq, x, t0, lanes, method, g.p, g.xk, g.td, g.te, g.z0, g.fd, g.fl, g.psr, g.psi, Real(0),
                           code, e0, emax, degenerate);
    const Real nan = math::sqrt(Real(-1));
    for (int c = 0; c < int(b.extent(0)); ++c) {
      Real e[W];  // <psi|B_c psi>
      packed_operator_expectation<W>(Kokkos::subview(b, c, Kokkos::ALL, Kokkos::ALL), n, g.psr, g.psi, br, bi, e);
      for (int q = 0; q < lanes; ++q) out(t0 + q, c) = code[q] ? nan : e[q];
    }
  }
};

}  // namespace detail

template <class Real, class ExecSpace = Kokkos::DefaultExecutionSpace>
class TargetPredictor {
 public:
  using memory_space = typename ExecSpace::memory_space;

  TargetPredictor() = default;
  TargetPredictor(int n, int max_chunk) : n_(n), max_chunk_(max_chunk) {
    QGML_REQUIRE(n >= 1 && max_chunk >= 1, "qgml::TargetPredictor: N and the chunk size must be >= 1");
    if (!packed()) {
      h_ = MatrixStack<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::TargetPredictor::H"),
                                           max_chunk, n, n);
      v_ = MatrixStack<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::TargetPredictor::V"),
                                           max_chunk, n, n);
      w_ = RealMatrix<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::TargetPredictor::w"),
                                          max_chunk, n);
      info_ = IntVector<memory_space>("qgml::TargetPredictor::info", max_chunk);
    }
  }

  // Whether predict() runs the packed ground-state kernel (host spaces, 2 <= N <= predictor_packed_max_n).
  bool packed() const { return plan::predictor_packed(backend_of<ExecSpace>, n_); }
  // Bytes of memory held.
  std::size_t bytes() const {
    return (h_.span() + v_.span()) * sizeof(complex_t<Real>) + w_.span() * sizeof(Real) + info_.span() * sizeof(int);
  }

  // y_hat(t, c) <- <psi_0(x_t)|B_c|psi_0(x_t)> for the points x (count x D, any layout the execution space
  // reads) and the C target operators b (C x N x N); y_hat holds at least count x C values. Asynchronous
  // on exec. Returns nothing about failed eigensolves: their predictions are NaN.
  template <class PointsView, class OutView>
  void predict(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& features,
               const MatrixStack<Real, memory_space>& b, const PointsView& points, const OutView& y_hat) {
    static_assert(OutView::rank == 2, "TargetPredictor::predict: y_hat is count x C");
    const int count = int(points.extent(0)), chunk = max_chunk_, n = n_;
    QGML_REQUIRE(
        features.matrix_size() == n && int(b.extent(1)) == n && int(b.extent(2)) == n,
        "qgml::TargetPredictor::predict: the matrices are not " + std::to_string(n) + " x " + std::to_string(n));
    QGML_REQUIRE(int(y_hat.extent(0)) >= count && y_hat.extent(1) == b.extent(0),
                 "qgml::TargetPredictor::predict: too few outputs for the points and target operators");
    if (count == 0) return;
    if constexpr (is_host_space_v<ExecSpace>) {
      if (packed()) {
        predict_packed(exec, features, b, points, y_hat);
        return;
      }
    }
    const Real nan = std::numeric_limits<Real>::quiet_NaN();
    for (int start = 0; start < count; start += chunk) {
      const int m = std::min(chunk, count - start);
      const auto range = Kokkos::make_pair(0, m);
      const auto h = Kokkos::subview(h_, range, Kokkos::ALL, Kokkos::ALL);
      const auto v = Kokkos::subview(v_, range, Kokkos::ALL, Kokkos::ALL);
      const auto w = Kokkos::subview(w_, range, Kokkos::ALL);
      const auto info = Kokkos::subview(info_, range);
      build_hamiltonians(exec, features, Kokkos::subview(points, Kokkos::make_pair(start, start + m), Kokkos::ALL), h);
      batched_eigh(exec, h, w, v, info);
      using kernel_type = detail::OperatorExpectation<Real, memory_space, std::remove_const_t<decltype(v)>,
                                                      std::remove_const_t<decltype(info)>, OutView>;
      Kokkos::parallel_for("qgml::TargetPredictor::expectation", Kokkos::RangePolicy<ExecSpace>(exec, 0, m),
                           kernel_type{b, v, info, y_hat, nan, n, start});
    }
  }

  // predict() with one target operator B (N x N, contiguous) into y_hat(t), t < count.
  template <class PointsView, class OutView>
  void predict(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& features,
               const Matrix<Real, memory_space>& b, const PointsView& points, const OutView& y_hat) {
    static_assert(OutView::rank == 1, "TargetPredictor::predict with one B: y_hat holds one value per point");
    QGML_REQUIRE(b.span_is_contiguous(), "qgml::TargetPredictor::predict: B must be contiguous");
    const MatrixStack<Real, memory_space> stack(b.data(), 1, b.extent(0), b.extent(1));
    const Kokkos::View<typename OutView::value_type**, Kokkos::LayoutStride, memory_space> out(
        y_hat.data(), Kokkos::LayoutStride(y_hat.extent(0), y_hat.stride(0), 1, 1));
    predict(exec, features, stack, points, out);
  }

  int max_chunk() const { return max_chunk_; }

 private:
  // predict() on the packed kernel (packed() only).
  template <class PointsView, class OutView>
  void predict_packed(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& features,
                      const MatrixStack<Real, memory_space>& b, const PointsView& points, const OutView& y_hat) const {
    constexpr int width = linalg::packed_eigh_width<Real>;
    using policy_type = Kokkos::TeamPolicy<ExecSpace>;
    using scratch_view = Kokkos::View<Real*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
    const int count = static_cast<int>(points.extent(0));
    const int d = features.dimension(), n = n_;
    const int packs = (count + width - 1) / width;
    // psi_0 of the energy kernel's scratch, then B_c psi_0 (complex, n per lane).
    const LineAlignedScratch<scratch_view> scratch{detail::packed_ground_state_scratch_reals(n, d, width) +
                                                   2 * std::size_t(n) * width};
    const std::size_t bytes = scratch.bytes();
    const int level = scratch_level(policy_type(exec, packs, 1), bytes, n, "packed prediction");
    const detail::PackedGroundStateMethod method = plan::packed_ground_state_method(n);
    using kernel_type = detail::PackedOperatorExpectation<width, Real, ExecSpace, PointsView, OutView>;
    Kokkos::parallel_for(
        "qgml::TargetPredictor::packed", policy_type(exec, packs, 1).set_scratch_size(level, Kokkos::PerTeam(bytes)),
        kernel_type{features.matrices(), features.square_sum(), points, b, y_hat, scratch, method, level, n, d, count});
  }

  int n_ = 0, max_chunk_ = 0;
  MatrixStack<Real, memory_space> h_, v_;
  RealMatrix<Real, memory_space> w_;
  IntVector<memory_space> info_;
};

}  // namespace qgml
