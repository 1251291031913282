// Commutator penalty (docs/math.md 4.8): P1 = sum_{i<j} ||C_ij||_F or P2 = sum_{i<j} ||C_ij||_F^2 with
// C_ij = [A_i, A_j], and its Hermitian gradient (convention of docs/math.md 4.1):
//   d||C_ij||_F / dA_i = [C_ij, A_j] / ||C_ij||_F,   d||C_ij||_F / dA_j = [A_i, C_ij] / ||C_ij||_F
//   d||C_ij||_F^2 / dA_i = 2 [C_ij, A_j],           d||C_ij||_F^2 / dA_j = 2 [A_i, C_ij]
// with the P1 gradient taken as 0 where C_ij = 0 (PyTorch's convention).
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/error.hpp"
#include "qgml/common/types.hpp"
#include "qgml/linalg/blas_gemm.hpp"
#include "qgml/model/matrix_configuration.hpp"
#include "qgml/train/loss_settings.hpp"

namespace qgml {

template <class Real, class ExecSpace>
class CommutatorPenalty;

namespace detail {

// Kernels are named functors, not extended lambdas: docs/architecture.md "Host execution spaces in a CUDA build".

// C_p = A_i A_j - A_j A_i for the pair p = (i, j), i < j.
template <class Real, class ExecSpace>
struct Commutators {
  using memory_space = typename ExecSpace::memory_space;
  using complex_type = complex_t<Real>;
  MatrixStack<Real, memory_space> a, c;
  int d = 0, n = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const int pij) const {
    const int p = pij / (n * n), r = (pij / n) % n, s = pij % n;
    int i = 0, j = 0;
    CommutatorPenalty<Real, ExecSpace>::pair_of(p, d, i, j);
    complex_type sum(0);
    for (int k = 0; k < n; ++k) sum += a(i, r, k) * a(j, k, s) - a(j, r, k) * a(i, k, s);
    c(p, r, s) = sum;
  }
};

// norms(p) = ||C_p||_F^2, one team per pair p.
template <class Real, class ExecSpace>
struct CommutatorSquaredNorms {
  using memory_space = typename ExecSpace::memory_space;
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using complex_type = complex_t<Real>;
  MatrixStack<Real, memory_space> c;
  RealVector<Real, memory_space> norms;
  int n = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const int p = member.league_rank();
    Real s2 = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(member, n * n),
        [&](const int rs, Real& acc) {
          const complex_type z = c(p, rs / n, rs % n);
          acc += z.real() * z.real() + z.imag() * z.imag();
        },
        s2);
    Kokkos::single(Kokkos::PerTeam(member), [&]() { norms(p) = s2; });
  }
};

// norms(p) <- ||C_p||_F = sqrt(norms(p)); value_out() += weight * (sum_p ||C_p||_F^2 if squared, else
// sum_p ||C_p||_F), summed over p in order.
template <class Real, class ExecSpace, class ValueView>
struct CommutatorNorms {
  using memory_space = typename ExecSpace::memory_space;
  RealVector<Real, memory_space> norms;
  ValueView value_out;
  int pairs = 0;
  Real weight = 0;
  bool squared = false;
  KOKKOS_INLINE_FUNCTION void operator()(const int) const {
    Real total = 0;
    for (int p = 0; p < pairs; ++p) {
      const Real s2 = norms(p);
      norms(p) = math::sqrt(s2);
      total += squared ? s2 : norms(p);
    }
    value_out() += weight * total;
  }
};

// gradient_l += weight * sum_{m != l} (+-) factor_p [C_p, A_m], p the pair of l and m (file comment).
template <class Real, class ExecSpace>
struct CommutatorGradient {
  using memory_space = typename ExecSpace::memory_space;
  using complex_type = complex_t<Real>;
  MatrixStack<Real, memory_space> a, c, gradient;
  RealVector<Real, memory_space> norms;
  int d = 0, n = 0;
  Real weight = 0;
  bool squared = false;
  KOKKOS_INLINE_FUNCTION void operator()(const int lrs) const {
    const int l = lrs / (n * n), r = (lrs / n) % n, s = lrs % n;
    complex_type g(0);
    for (int m = 0; m < d; ++m) {
      if (m == l) continue;
      // l first in the pair: [C, A_m]; l second: [A_m, C] = -[C, A_m].
      const int p = l < m ? CommutatorPenalty<Real, ExecSpace>::pair_index(l, m, d)
                          : CommutatorPenalty<Real, ExecSpace>::pair_index(m, l, d);
      const Real factor = squared ? Real(2) : (norms(p) > Real(0) ? Real(1) / norms(p) : Real(0));
      complex_type comm(0);
      for (int k = 0; k < n; ++k) comm += c(p, r, k) * a(m, k, s) - a(m, r, k) * c(p, k, s);
      g += (l < m ? factor : -factor) * comm;
    }
    gradient(l, r, s) += weight * g;
  }
};

// C_p <- factor_p C_p with factor_p = 2 (squared) or 1 / ||C_p||_F (0 where C_p = 0): one entry (p, r, s).
// Then weight * sum_{m != l} (+-) [C_p, A_m] is the gradient of the file comment, by GEMM.
template <class Real, class ExecSpace>
struct ScaleCommutators {
  using memory_space = typename ExecSpace::memory_space;
  MatrixStack<Real, memory_space> c;
  RealVector<Real, memory_space> norms;
  int n = 0;
  bool squared = false;
  KOKKOS_INLINE_FUNCTION void operator()(const int prs) const {
    const int p = prs / (n * n), r = (prs / n) % n, s = prs % n;
    const Real factor = squared ? Real(2) : (norms(p) > Real(0) ? Real(1) / norms(p) : Real(0));
    c(p, r, s) *= factor;
  }
};

}  // namespace detail

template <class Real, class ExecSpace>
class CommutatorPenalty {
 public:
  using memory_space = typename ExecSpace::memory_space;

  CommutatorPenalty() = default;
  CommutatorPenalty(int d, int n)
      : pairs_(d * (d - 1) / 2),
        c_(Kokkos::ViewAllocateWithoutInitializing("qgml::CommutatorPenalty::C"), pairs_ > 0 ? pairs_ : 1, n, n),
        norms_("qgml::CommutatorPenalty::norms", pairs_ > 0 ? pairs_ : 1) {}

  // gradient += weight * dP/dA; value_out() += weight * P (both on the device, asynchronous). The
  // products run through KokkosBlas::gemm where detail::configuration_products_use_gemm (N >= 8 on
  // host spaces; linalg/blas_gemm.hpp), else as kernels with one thread per entry.
  template <class ValueView>
  void add(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config, PenaltyKind kind, Real weight,
           const MatrixStack<Real, memory_space>& gradient, const ValueView& value_out) const {
    add(exec, config, kind, weight, gradient, value_out,
        detail::configuration_products_use_gemm(exec, config.matrix_size()));
  }

  // The same with the products' path chosen by the caller (use_gemm requires detail::blas_gemm_usable).
  template <class ValueView>
  void add(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config, PenaltyKind kind, Real weight,
           const MatrixStack<Real, memory_space>& gradient, const ValueView& value_out, const bool use_gemm) const {
    if (kind == PenaltyKind::none || weight == Real(0) || pairs_ == 0) return;
    const int d = config.dimension(), n = config.matrix_size(), pairs = pairs_;
    QGML_REQUIRE(!use_gemm || detail::blas_gemm_usable(exec, (long long)n * n),
                 "qgml::CommutatorPenalty::add: KokkosBlas::gemm cannot run these products on this execution space");
    const auto a = config.matrices();
    const auto c = c_;
    const auto norms = norms_;
    // C_p = A_i A_j - A_j A_i for the pair p = (i, j), i < j (pairs enumerated row by row).
    if (use_gemm)
      commutators_by_gemm(a, d);
    else
      Kokkos::parallel_for("qgml::CommutatorPenalty::commutators",
                           Kokkos::RangePolicy<ExecSpace>(exec, 0, pairs * n * n),
                           detail::Commutators<Real, ExecSpace>{a, c, d, n});
    const bool squared = kind == PenaltyKind::frobenius_squared;
    // ||C_p||_F^2 by one team per pair (a fixed order for a given team size: one thread on host
    // spaces), then the norms and the total over the pairs in order.
    using policy_type = Kokkos::TeamPolicy<ExecSpace>;
    const policy_type policy =
        is_host_space_v<ExecSpace> ? policy_type(exec, pairs, 1) : policy_type(exec, pairs, Kokkos::AUTO);
    Kokkos::parallel_for("qgml::CommutatorPenalty::squared_norms", policy,
                         detail::CommutatorSquaredNorms<Real, ExecSpace>{c, norms, n});
    Kokkos::parallel_for("qgml::CommutatorPenalty::norms", Kokkos::RangePolicy<ExecSpace>(exec, 0, 1),
                         detail::CommutatorNorms<Real, ExecSpace, ValueView>{norms, value_out, pairs, weight, squared});
    if (use_gemm) {
      // gradient_l += weight * sum_{m != l} (+-) [factor_p C_p, A_m], m ascending: the factor (on the
      // device) scaled into C_p first, so that every GEMM's alpha is known on the host.
      Kokkos::parallel_for("qgml::CommutatorPenalty::scale", Kokkos::RangePolicy<ExecSpace>(exec, 0, pairs * n * n),
                           detail::ScaleCommutators<Real, ExecSpace>{c, norms, n, squared});
      gradient_by_gemm(a, gradient, d, weight);
    } else {
      Kokkos::parallel_for("qgml::CommutatorPenalty::gradient", Kokkos::RangePolicy<ExecSpace>(exec, 0, d * n * n),
                           detail::CommutatorGradient<Real, ExecSpace>{a, c, gradient, norms, d, n, weight, squared});
    }
  }

  KOKKOS_INLINE_FUNCTION static int pair_index(int i, int j, int d) { return i * (2 * d - i - 1) / 2 + (j - i - 1); }
  KOKKOS_INLINE_FUNCTION static void pair_of(int p, int d, int& i, int& j) {
    i = 0;
    while (p >= d - 1 - i) {
      p -= d - 1 - i;
      ++i;
    }
    j = i + 1 + p;
  }

 private:
  // C_p = A_i A_j - A_j A_i by two GEMMs per pair.
  void commutators_by_gemm(const MatrixStack<Real, memory_space>& a, const int d) const {
#if defined(QGML_HAVE_KOKKOSKERNELS)
    using complex_type = complex_t<Real>;
    for (int p = 0; p < pairs_; ++p) {
      int i = 0, j = 0;
      pair_of(p, d, i, j);
      const auto ai = Kokkos::subview(a, i, Kokkos::ALL, Kokkos::ALL);
      const auto aj = Kokkos::subview(a, j, Kokkos::ALL, Kokkos::ALL);
      const auto cp = Kokkos::subview(c_, p, Kokkos::ALL, Kokkos::ALL);
      KokkosBlas::gemm("N", "N", complex_type(1), ai, aj, complex_type(0), cp);
      KokkosBlas::gemm("N", "N", complex_type(-1), aj, ai, complex_type(1), cp);
    }
#else
    (void)a;
    (void)d;
#endif
  }

  // gradient_l += weight * sum_{m != l} s_lm (C'_p A_m - A_m C'_p), m ascending, s_lm = +1 for l < m
  // (p = (l, m)) and -1 for l > m (p = (m, l)), C'_p the scaled commutators.
  void gradient_by_gemm(const MatrixStack<Real, memory_space>& a, const MatrixStack<Real, memory_space>& gradient,
                        const int d, const Real weight) const {
#if defined(QGML_HAVE_KOKKOSKERNELS)
    using complex_type = complex_t<Real>;
    for (int l = 0; l < d; ++l) {
      const auto gl = Kokkos::subview(gradient, l, Kokkos::ALL, Kokkos::ALL);
      for (int m = 0; m < d; ++m) {
        if (m == l) continue;
        const int p = l < m ? pair_index(l, m, d) : pair_index(m, l, d);
        const Real sw = l < m ? weight : -weight;
        const auto am = Kokkos::subview(a, m, Kokkos::ALL, Kokkos::ALL);
        const auto cp = Kokkos::subview(c_, p, Kokkos::ALL, Kokkos::ALL);
        KokkosBlas::gemm("N", "N", complex_type(sw), cp, am, complex_type(1), gl);
        KokkosBlas::gemm("N", "N", complex_type(-sw), am, cp, complex_type(1), gl);
      }
    }
#else
    (void)a;
    (void)gradient;
    (void)d;
    (void)weight;
#endif
  }

  int pairs_ = 0;
  MatrixStack<Real, memory_space> c_;
  RealVector<Real, memory_space> norms_;
};

}  // namespace qgml
