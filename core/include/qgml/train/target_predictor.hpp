// Predictions of a supervised model (docs/supervised.md, section 1): y_hat(x) = <psi_0(x)|B|psi_0(x)>,
// psi_0(x) the ground state of H(x) = 1/2 sum_k (A_k - x_k)^2 of the feature matrices A_1..A_D.
// Points are processed in chunks of at most max_chunk with buffers allocated once, so that a trainer
// can predict a validation set every epoch without allocating.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <limits>
#include <string>

#include "qgml/common/error.hpp"
#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/model/hamiltonian.hpp"
#include "qgml/model/matrix_configuration.hpp"

namespace qgml {

template <class Real, class ExecSpace = Kokkos::DefaultExecutionSpace>
class TargetPredictor {
 public:
  using memory_space = typename ExecSpace::memory_space;

  TargetPredictor() = default;
  TargetPredictor(int n, int max_chunk)
      : n_(n),
        h_(Kokkos::ViewAllocateWithoutInitializing("qgml::TargetPredictor::H"), max_chunk, n, n),
        v_(Kokkos::ViewAllocateWithoutInitializing("qgml::TargetPredictor::V"), max_chunk, n, n),
        w_(Kokkos::ViewAllocateWithoutInitializing("qgml::TargetPredictor::w"), max_chunk, n),
        info_("qgml::TargetPredictor::info", max_chunk) {
    QGML_REQUIRE(n >= 1 && max_chunk >= 1, "qgml::TargetPredictor: N and the chunk size must be >= 1");
  }

  // y_hat(t) <- <psi_0(x_t)|B|psi_0(x_t)> for the points x (count x D, any layout the execution space
  // reads); y_hat holds at least count values. Asynchronous on exec. Returns nothing about failed
  // eigensolves: their predictions are NaN.
  template <class PointsView, class OutView>
  void predict(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& features,
               const Matrix<Real, memory_space>& b, const PointsView& points, const OutView& y_hat) {
    const int count = int(points.extent(0)), chunk = int(h_.extent(0)), n = n_;
    QGML_REQUIRE(
        features.matrix_size() == n && int(b.extent(0)) == n && int(b.extent(1)) == n,
        "qgml::TargetPredictor::predict: the matrices are not " + std::to_string(n) + " x " + std::to_string(n));
    QGML_REQUIRE(int(y_hat.extent(0)) >= count, "qgml::TargetPredictor::predict: too few outputs for the points");
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
      Kokkos::parallel_for(
          "qgml::TargetPredictor::expectation", Kokkos::RangePolicy<ExecSpace>(exec, 0, m), KOKKOS_LAMBDA(const int t) {
            // <psi|B|psi> = sum_i conj(psi_i) (B psi)_i; psi = row 0 of V.
            Real e = 0;
            for (int i = 0; i < n; ++i) {
              complex_t<Real> beta(0);
              for (int j = 0; j < n; ++j) beta += b(i, j) * v(t, 0, j);
              e += v(t, 0, i).real() * beta.real() + v(t, 0, i).imag() * beta.imag();
            }
            y_hat(start + t) = info(t) == 0 ? e : nan;
          });
    }
  }

  int max_chunk() const { return int(h_.extent(0)); }

 private:
  int n_ = 0;
  MatrixStack<Real, memory_space> h_, v_;
  RealMatrix<Real, memory_space> w_;
  IntVector<memory_space> info_;
};

}  // namespace qgml
