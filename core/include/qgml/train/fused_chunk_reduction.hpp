// The fused host path's batch gradient from the chunks' partial sums (loss_gradient_packed.hpp): the
// partials summed in chunk order, the features' A_l M term added, then G_l = X_l + X_l^H (docs/math.md
// 4.5).
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/train/loss_gradient_packed.hpp"
#include "qgml/train/loss_gradient_views.hpp"

namespace qgml::detail {

// Every kernel is a named functor, no KOKKOS_LAMBDA: docs/architecture.md "Host execution spaces in a
// CUDA build".

// x(0, part, l N + i, j) += x(c, part, l N + i, j) for the chunks c >= 1 in order.
template <class PartialsView>
struct SumGradientChunks {
  PartialsView x;
  int chunks = 0, blocks = 0, n = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int pli) const {
    const int part = pli / (blocks * n), li = pli % (blocks * n);
    for (int c = 1; c < chunks; ++c)
      for (int j = 0; j < n; ++j) x(0, part, li, j) += x(c, part, li, j);
  }
};

// X_l(i, :) += c_coef sum_m A_l(i, m) M(m, :), M the last block of chunk 0's partial.
template <class Real, class PartialsView, class AView>
struct AddFeaturePhiTerm {
  PartialsView x;
  AView a;
  Real c_coef = 0;
  int n = 0, mb = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int li) const {
    using complex_type = complex_t<Real>;
    const int l = li / n, i = li % n;
    for (int m = 0; m < n; ++m) {
      const complex_type f = c_coef * a(l, i, m);
      const Real fr = f.real(), fi = f.imag();
      for (int j = 0; j < n; ++j) {
        const Real mr = x(0, 0, mb + m, j), mi = x(0, 1, mb + m, j);
        x(0, 0, li, j) += fr * mr - fi * mi;
        x(0, 1, li, j) += fr * mi + fi * mr;
      }
    }
  }
};

// g_l = X_l + X_l^H from chunk 0's real and imaginary parts (accumulate: added to g_l).
template <class Real, class PartialsView, class GradientView>
struct SymmetrizeGradientChunks {
  PartialsView x;
  GradientView g;
  int n = 0;
  bool accumulate = false;

  KOKKOS_INLINE_FUNCTION void operator()(const int lij) const {
    using complex_type = complex_t<Real>;
    const int l = lij / (n * n), i = (lij / n) % n, j = lij % n;
    const complex_type gij(x(0, 0, l * n + i, j) + x(0, 0, l * n + j, i),
                           x(0, 1, l * n + i, j) - x(0, 1, l * n + j, i));
    g(l, i, j) = accumulate ? g(l, i, j) + gij : gij;
  }
};

// G_l = X_l + X_l^H with X_l the sum of the chunks' partials in chunk order: first summed into chunk 0's
// partial row by row (contiguous reads along j; the same order of additions per element as summing
// each element over the chunks), then X_l += c_coef A_l M for the D features (M: the last block,
// loss_gradient_packed.hpp), then symmetrised. a: the features A_l; c_coef: gradient_coefficients'.
template <class Real, class ExecSpace, class AView>
void loss_gradient_reduce_chunks(const ExecSpace& exec,
                                 const LossGradientViews<Real, typename ExecSpace::memory_space>& buf, const AView& a,
                                 Real c_coef, int count, bool accumulate, bool paired) {
  using partials_view = decltype(buf.partials);  // x(c, part, l * n + i, j): PackedGradientPartials
  const int n = buf.n, d = buf.d, blocks = packed_gradient_blocks(buf.d, buf.targets);
  const int chunks = packed_gradient_chunks<Real>(count, n, blocks, paired);
  if (chunks > 1)
    Kokkos::parallel_for("qgml::LossGradient::sum_chunks", Kokkos::RangePolicy<ExecSpace>(exec, 0, 2 * blocks * n),
                         SumGradientChunks<partials_view>{buf.partials, chunks, blocks, n});
  const int mb = (blocks - 1) * n;  // row 0 of M
  Kokkos::parallel_for("qgml::LossGradient::a_phi_term", Kokkos::RangePolicy<ExecSpace>(exec, 0, d * n),
                       AddFeaturePhiTerm<Real, partials_view, AView>{buf.partials, a, c_coef, n, mb});
  Kokkos::parallel_for(
      "qgml::LossGradient::reduce_chunks", Kokkos::RangePolicy<ExecSpace>(exec, 0, (blocks - 1) * n * n),
      SymmetrizeGradientChunks<Real, partials_view, decltype(buf.g)>{buf.partials, buf.g, n, accumulate});
}

}  // namespace qgml::detail
