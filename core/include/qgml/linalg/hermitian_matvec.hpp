// Products y_m = A_m x of a stack of Hermitian matrices with one complex vector, written once against
// the Loops interface (loops.hpp). A_m is read by its columns, y_m(i) = sum_j conj(A_m(j, i)) x(j)
// (A_m = A_m^H), with the terms added in the order j = 0, 1, ... in both mappings:
//  - SerialLoops: one axpy per row j of A_m, y_m += conj(A_m(j, :)) x(j), contiguous in i (SIMD on CPUs);
//  - TeamLoops: thread (m, i) runs over j, and neighbouring threads read neighbouring entries of a row
//    (coalesced on GPUs).
// Used for y_k = A_k psi and c_l = A_l phi of the team kernels (docs/math.md 2.2, 4.5).
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>

#include "qgml/common/types.hpp"
#include "qgml/linalg/lanes.hpp"
#include "qgml/linalg/loops.hpp"

namespace qgml::linalg {

// a: count Hermitian N x N matrices, a(m, i, j) (any View or functor with that call); x: N complex, as
// separate real and imaginary parts (xr, xi); y: count N complex, y[m * N + i] = (A_m x)_i, which must not
// overlap a, xr or xi. Collective over the loops; y is complete after the next barrier().
template <class Loops, class AView, class Real>
KOKKOS_FUNCTION void hermitian_matvecs(const Loops& loops, const AView& a, const int count, const int n, const Real* xr,
                                       const Real* xi, complex_t<Real>* y) {
  using complex_type = complex_t<Real>;
  if constexpr (Loops::is_serial) {
    for (int m = 0; m < count; ++m) {
      Real* const ym = reinterpret_cast<Real*>(y + std::size_t(m) * n);
      for (int i = 0; i < 2 * n; ++i) ym[i] = Real(0);
      for (int j = 0; j < n; ++j) {
        const Real* const row = reinterpret_cast<const Real*>(&a(m, j, 0));
        const Real pr = xr[j], pi = xi[j];
        QGML_LANES(i, n) {
          const Real ar = row[2 * i], ai = row[2 * i + 1];
          ym[2 * i] += ar * pr + ai * pi;
          ym[2 * i + 1] += ar * pi - ai * pr;
        }
      }
    }
  } else {
    loops.for_each(0, count * n, [&](const int mi) {
      const int m = mi / n, i = mi % n;
      Real yr = 0, yi = 0;
      for (int j = 0; j < n; ++j) {
        const complex_type aji = a(m, j, i);
        const Real ar = aji.real(), ai = aji.imag();
        yr += ar * xr[j] + ai * xi[j];
        yi += ar * xi[j] - ai * xr[j];
      }
      y[mi] = complex_type(yr, yi);
    });
  }
}

}  // namespace qgml::linalg
