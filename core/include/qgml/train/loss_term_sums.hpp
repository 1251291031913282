// The batch's sums of the per-point loss terms in a fixed order (chunks of term_sum_chunk points in order,
// then the chunks in order, so the bits depend on the number of points only), and the batch gradient of
// the separate and team kernels: the product of gradient_product.hpp and the term sums.
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/train/gradient_product.hpp"
#include "qgml/train/loss_gradient_views.hpp"
#include "qgml/train/loss_settings.hpp"

namespace qgml::detail {

// Every kernel is a named functor, no KOKKOS_LAMBDA: docs/architecture.md "Host execution spaces in a
// CUDA build".

// Points per chunk of the per-point term sums.
inline constexpr int term_sum_chunk = 512;
inline int term_sum_chunks(int count) { return (count + term_sum_chunk - 1) / term_sum_chunk; }

// Fixed-order sums of the per-point terms, in parallel: each chunk of term_sum_chunk points summed in
// order (one thread per chunk and term), then the chunks in order, so the bits depend on the number of
// points only. The penalty entry is reset unless accumulating.
// partials(c, q): the sum of term q over chunk c's points in order.
template <class TermsView, class PartialsView>
struct TermChunkSums {
  TermsView terms;
  PartialsView partials;
  int count = 0, q_count = 0;
  bool grouped = false;

  KOKKOS_INLINE_FUNCTION void operator()(const int cq) const {
    const int c = cq / q_count, q = cq % q_count;
    const int end = (c + 1) * term_sum_chunk < count ? (c + 1) * term_sum_chunk : count;
    // On devices the loads of a group go out before its additions (in order, so the same bits):
    // one load and add at a time, a GPU thread waited a memory latency per point, a sizeable share of
    // a batch at N = 8. On CPUs the plain loop: the grouped one made the N = 8 training epoch slower
    // (perf/NOTES.md, "Several points per team on GPUs: VectorLoops and TeamShape"; the CPU figure in
    // "Measurements moved out of code comments (2026-12-03)").
    double s = 0;
    int t = c * term_sum_chunk;
    if (grouped) {
      constexpr int group = 32;
      for (; t + group <= end; t += group) {
        double v[group];
        for (int j = 0; j < group; ++j) v[j] = double(terms(t + j, q));
        for (int j = 0; j < group; ++j) s += v[j];
      }
    }
    for (; t < end; ++t) s += double(terms(t, q));
    partials(c, q) = s;
  }
};

// sums(q) = the chunk partials of term q summed in chunk order (accumulate: added to sums(q)).
template <class PartialsView, class SumsView>
struct TermSums {
  PartialsView partials;
  SumsView sums;
  int chunks = 0, q_count = 0;
  bool accumulate = false;

  KOKKOS_INLINE_FUNCTION void operator()(const int q) const {
    double s = 0;
    if (q < q_count)
      for (int c = 0; c < chunks; ++c) s += partials(c, q);
    sums(q) = accumulate ? sums(q) + s : s;
  }
};

template <class Real, class ExecSpace>
void loss_gradient_reduce_terms(const ExecSpace& exec,
                                const LossGradientViews<Real, typename ExecSpace::memory_space>& buf, int count,
                                bool accumulate) {
  using terms_view = decltype(buf.terms);
  using partials_view = decltype(buf.term_partials);
  using sums_view = decltype(buf.sums);
  const int chunks = term_sum_chunks(count);
  constexpr int q_count = int(loss_penalty);
  const bool grouped = !is_host_space_v<ExecSpace>;
  Kokkos::parallel_for("qgml::LossGradient::term_chunks", Kokkos::RangePolicy<ExecSpace>(exec, 0, chunks * q_count),
                       TermChunkSums<terms_view, partials_view>{buf.terms, buf.term_partials, count, q_count, grouped});
  Kokkos::parallel_for("qgml::LossGradient::reduce_terms", Kokkos::RangePolicy<ExecSpace>(exec, 0, q_count + 1),
                       TermSums<partials_view, sums_view>{buf.term_partials, buf.sums, chunks, q_count, accumulate});
}

// G = X + X^H by the GEMM of gradient_product over the 2 count rows of U and W, and the term sums.
template <class Real, class ExecSpace>
void loss_gradient_reduce(const ExecSpace& exec, const LossGradientViews<Real, typename ExecSpace::memory_space>& buf,
                          int count, bool accumulate) {
  gradient_product<Real>(exec, buf.u, buf.wv, 2 * count, buf.y, buf.product_partials, buf.g, accumulate);
  loss_gradient_reduce_terms(exec, buf, count, accumulate);
}

}  // namespace qgml::detail
