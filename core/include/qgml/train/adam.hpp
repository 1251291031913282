// Adam (Kingma & Ba 2015; PyTorch's defaults beta1 0.9, beta2 0.999, eps 1e-8, no weight decay) on the
// N^2 real Hermitian coordinates of every A_k (docs/math.md 8.1): a_ii, Re a_ij and Im a_ij (i < j), whose
// gradients are G_ii, 2 Re G_ij and 2 Im G_ij. The matrices never leave the Hermitian subspace.
// Moments are stored as D x N x N real arrays: (k, i, i) diagonal, (k, i, j) Re and (k, j, i) Im, i < j.
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/model/matrix_configuration.hpp"

namespace qgml {

struct AdamSettings {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
};

namespace detail {

// The kernels of HermitianAdam::step, named functors rather than extended lambdas: a host launch of an
// nvcc extended lambda whose enclosing template is instantiated in several translation units can call
// a null pointer in CUDA builds (docs/architecture.md, "Host execution spaces in a CUDA build").
template <class Real>
KOKKOS_INLINE_FUNCTION Real adam_pow_int(Real b, int e) {
  Real r = 1;
  while (e > 0) {
    if (e & 1) r *= b;
    b *= b;
    e >>= 1;
  }
  return r;
}

// The step count t <- t + 1 (unless skipped) and the bias corrections 1 / (1 - beta1^t), 1 / (1 - beta2^t)
// of this step, once for all entries.
template <class Real, class SkipView, class StepView, class CorrectionView>
struct AdamCountStep {
  SkipView skip;
  StepView step;
  CorrectionView corrections;
  Real b1 = 0, b2 = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const int) const {
    if (skip() == 0) step() += 1;
    corrections(0) = Real(1) / (Real(1) - adam_pow_int(b1, step()));
    corrections(1) = Real(1) / (Real(1) - adam_pow_int(b2, step()));
  }
};

// One Adam step on the real coordinates of entry (k, i, j), i <= j, of every A_k (file comment).
template <class Real, class MemorySpace, class SkipView>
struct AdamUpdate {
  MatrixStack<Real, MemorySpace> a;
  Kokkos::View<Real***, Kokkos::LayoutRight, MemorySpace> m, v;
  MatrixStack<Real, MemorySpace> gradient;
  SkipView skip;
  Kokkos::View<Real[2], MemorySpace> corrections;  // AdamCountStep's
  int n = 0;
  Real b1 = 0, b2 = 0, eps = 0, rate = 0;

  KOKKOS_INLINE_FUNCTION Real update(const int k, const int r, const int c, const Real g, const Real c1,
                                     const Real c2) const {
    const Real mm = b1 * m(k, r, c) + (Real(1) - b1) * g;
    const Real vv = b2 * v(k, r, c) + (Real(1) - b2) * g * g;
    m(k, r, c) = mm;
    v(k, r, c) = vv;
    return rate * (mm * c1) / (math::sqrt(vv * c2) + eps);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const int kij) const {
    const int k = kij / (n * n), i = (kij / n) % n, j = kij % n;
    if (skip() != 0 || i > j) return;
    const Real c1 = corrections(0), c2 = corrections(1);
    if (i == j) {
      const Real re = a(k, i, i).real() - update(k, i, i, gradient(k, i, i).real(), c1, c2);
      a(k, i, i) = complex_t<Real>(re, Real(0));
    } else {
      const Real re = a(k, i, j).real() - update(k, i, j, Real(2) * gradient(k, i, j).real(), c1, c2);
      const Real im = a(k, i, j).imag() - update(k, j, i, Real(2) * gradient(k, i, j).imag(), c1, c2);
      a(k, i, j) = complex_t<Real>(re, im);
      a(k, j, i) = complex_t<Real>(re, -im);
    }
  }
};

}  // namespace detail

template <class Real, class ExecSpace>
class HermitianAdam {
 public:
  using memory_space = typename ExecSpace::memory_space;
  using moments_type = Kokkos::View<Real***, Kokkos::LayoutRight, memory_space>;

  HermitianAdam() = default;
  HermitianAdam(int d, int n, AdamSettings settings = {})
      : settings_(settings),
        m_("qgml::HermitianAdam::m", d, n, n),
        v_("qgml::HermitianAdam::v", d, n, n),
        step_("qgml::HermitianAdam::step"),
        corrections_("qgml::HermitianAdam::corrections") {}

  // One step A <- A - lr m_hat / (sqrt(v_hat) + eps) unless skip() != 0; then S is refreshed unless
  // refresh_square_sum is false (the caller refreshes it, or the S of whatever subset it needs).
  // The step counter lives on the device, so skipped steps need no host round trip.
  template <class SkipView>
  void step(const ExecSpace& exec, MatrixConfiguration<Real, ExecSpace>& config,
            const MatrixStack<Real, memory_space>& gradient, double lr, const SkipView& skip,
            bool refresh_square_sum = true) {
    const int n = config.matrix_size();
    Kokkos::parallel_for(
        "qgml::HermitianAdam::count_step", Kokkos::RangePolicy<ExecSpace>(exec, 0, 1),
        detail::AdamCountStep<Real, SkipView, Kokkos::View<int, memory_space>, Kokkos::View<Real[2], memory_space>>{
            skip, step_, corrections_, Real(settings_.beta1), Real(settings_.beta2)});
    detail::AdamUpdate<Real, memory_space, SkipView> f;
    f.a = config.matrices();
    f.m = m_;
    f.v = v_;
    f.gradient = gradient;
    f.skip = skip;
    f.corrections = corrections_;
    f.n = n;
    f.b1 = Real(settings_.beta1);
    f.b2 = Real(settings_.beta2);
    f.eps = Real(settings_.eps);
    f.rate = Real(lr);
    Kokkos::parallel_for("qgml::HermitianAdam::step",
                         Kokkos::RangePolicy<ExecSpace>(exec, 0, config.dimension() * n * n), f);
    if (refresh_square_sum) config.update_square_sum(exec);
  }

  const moments_type& first_moment() const { return m_; }
  const moments_type& second_moment() const { return v_; }
  const Kokkos::View<int, memory_space>& step_count() const { return step_; }
  const AdamSettings& settings() const { return settings_; }

 private:
  AdamSettings settings_;
  moments_type m_, v_;
  Kokkos::View<int, memory_space> step_;
  Kokkos::View<Real[2], memory_space> corrections_;
};

}  // namespace qgml
