// The batch gradient as one product, shared by the team and the separate kernels of LossGradient
// (docs/math.md 4.5): with the per-point rows a_l, e_l of U (2 T x D N) and psi, phi of W (2 T x N),
// X_l = sum_rows u_l w^H, i.e. Y = W^H U (N x D N) with X_l(i, j) = Y(j, l N + i), and G_l = X_l + X_l^H.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/linalg/blas_gemm.hpp"

namespace qgml::detail {

// Rows of U and W per chunk of the device reduction of gradient_product: fixed, so that the sum order
// depends only on the number of points.
inline constexpr int gradient_rows_per_chunk = 256;

// Chunks of gradient_product's reduction for `rows` rows, at most max_chunks (each then takes more
// rows). A function of (rows, max_chunks) only.
inline int gradient_chunks(int rows, int max_chunks) {
  const int chunks = (rows + gradient_rows_per_chunk - 1) / gradient_rows_per_chunk;
  return chunks < 1 ? 1 : (chunks > max_chunks ? max_chunks : chunks);
}

// Partial sums the reduction of gradient_product may hold: as many chunks as fit 64 MiB.
template <class Real>
int gradient_max_chunks(int n, int d, int max_rows) {
  const long long per_chunk = 2LL * d * n * n * (long long)sizeof(Real);
  long long cap = (64LL << 20) / (per_chunk > 0 ? per_chunk : 1);
  const long long needed = (max_rows + gradient_rows_per_chunk - 1) / gradient_rows_per_chunk;
  cap = cap < needed ? cap : needed;
  return int(cap < 1 ? 1 : cap);
}

// The kernels of gradient_product (named functors: docs/architecture.md "Host execution spaces in a CUDA
// build").

// partials(c, j, m) = sum_{r in chunk c} conj(w(r, j)) u(r, m), the rows of a chunk in order.
template <class Real, class ExecSpace>
struct GradientProductChunks {
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using memory_space = typename ExecSpace::memory_space;
  ComplexMatrix<Real, memory_space> u, wv;
  Kokkos::View<complex_t<Real>***, Kokkos::LayoutRight, memory_space> partials;
  int rows = 0, per = 0, n = 0, dn = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    using complex_type = complex_t<Real>;
    const int c = member.league_rank();
    const int begin = c * per, end = (c + 1) * per < rows ? (c + 1) * per : rows;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, n * dn), [&](const int jm) {
      const int j = jm / dn, m = jm % dn;
      complex_type sum(0);
      for (int r = begin; r < end; ++r) sum += Kokkos::conj(wv(r, j)) * u(r, m);
      partials(c, j, m) = sum;
    });
  }
};

// Y(j, m) = sum_c partials(c, j, m), the chunks in order.
template <class Real, class MemorySpace>
struct GradientProductSum {
  Kokkos::View<complex_t<Real>***, Kokkos::LayoutRight, MemorySpace> partials;
  ComplexMatrix<Real, MemorySpace> y;
  int chunks = 0, dn = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int jm) const {
    using complex_type = complex_t<Real>;
    const int j = jm / dn, m = jm % dn;
    complex_type sum(0);
    for (int c = 0; c < chunks; ++c) sum += partials(c, j, m);
    y(j, m) = sum;
  }
};

// g_l(i, j) = Y(j, l N + i) + conj(Y(i, l N + j)) (accumulate: added to g_l).
template <class Real, class MemorySpace>
struct GradientSymmetrize {
  ComplexMatrix<Real, MemorySpace> y;
  MatrixStack<Real, MemorySpace> g;
  int n = 0;
  bool accumulate = false;

  KOKKOS_INLINE_FUNCTION void operator()(const int lij) const {
    using complex_type = complex_t<Real>;
    const int l = lij / (n * n), i = (lij / n) % n, j = lij % n;
    const complex_type gij = y(j, l * n + i) + Kokkos::conj(y(i, l * n + j));
    g(l, i, j) = accumulate ? g(l, i, j) + gij : gij;
  }
};

// g_l = X_l + X_l^H (accumulate: g_l += ...) with X_l(i, j) = sum_{r < rows} u(r, l N + i) conj(w(r, j)):
// Y = W^H U by KokkosBlas::gemm where blas_gemm_usable (linalg/blas_gemm.hpp), else by a fixed-order chunked
// reduction (partials: at least gradient_chunks(rows, ...) x N x D N). Asynchronous on exec.
template <class Real, class ExecSpace>
void gradient_product(
    const ExecSpace& exec, const ComplexMatrix<Real, typename ExecSpace::memory_space>& u,
    const ComplexMatrix<Real, typename ExecSpace::memory_space>& wv, int rows,
    const ComplexMatrix<Real, typename ExecSpace::memory_space>& y,
    const Kokkos::View<complex_t<Real>***, Kokkos::LayoutRight, typename ExecSpace::memory_space>& partials,
    const MatrixStack<Real, typename ExecSpace::memory_space>& g, bool accumulate) {
  const int n = static_cast<int>(wv.extent(1));
  const int dn = static_cast<int>(u.extent(1));
  bool done = false;
#if defined(QGML_HAVE_KOKKOSKERNELS)
  if (blas_gemm_usable(exec, (long long)n * dn)) {
    using complex_type = complex_t<Real>;
    const auto rows_range = Kokkos::make_pair(0, rows);
    KokkosBlas::gemm("C", "N", complex_type(1), Kokkos::subview(wv, rows_range, Kokkos::ALL),
                     Kokkos::subview(u, rows_range, Kokkos::ALL), complex_type(0), y);
    done = true;
  }
#endif
  if (!done) {
    using policy_type = Kokkos::TeamPolicy<ExecSpace>;
    using memory_space = typename ExecSpace::memory_space;
    const int chunks = gradient_chunks(rows, static_cast<int>(partials.extent(0)));
    const int per = (rows + chunks - 1) / chunks;
    Kokkos::parallel_for("qgml::LossGradient::product_chunks", policy_type(exec, chunks, Kokkos::AUTO),
                         GradientProductChunks<Real, ExecSpace>{u, wv, partials, rows, per, n, dn});
    Kokkos::parallel_for("qgml::LossGradient::product_sum", Kokkos::RangePolicy<ExecSpace>(exec, 0, n * dn),
                         GradientProductSum<Real, memory_space>{partials, y, chunks, dn});
  }
  Kokkos::parallel_for("qgml::LossGradient::symmetrize",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, int(g.extent(0)) * n * n),
                       GradientSymmetrize<Real, typename ExecSpace::memory_space>{y, g, n, accumulate});
}

}  // namespace qgml::detail
