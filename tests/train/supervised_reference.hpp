// Host reference, in double, of the supervised objective and its exact gradient (docs/supervised.md,
// sections 5 and 11), the oracle for the supervised kernels. Per point, from a full eigendecomposition of
// H(x) = 1/2 sum_k (A_k - x_k)^2 (formed directly, not as S - sum_k x_k A_k + |x|^2 / 2):
//   y_hat_c = <psi|B_c|psi>,  l and g_c = dl/dy_hat_c (point_loss, train/supervised_loss.hpp),
//   R = sum_{n>=1} |n><n| f(E_n - E_0),  f(g) = g / (g^2 + eta^2)  (docs/math.md 4.7, ground_state/degeneracy.hpp),
//   s = lambda (1 - w) sum_k r_k A_k psi + sum_c (g_c / 2) B_c psi,  phi = R s,  r = xbar - x,
//   b_l = (A_l - x_l) psi,  c_l = (A_l - x_l) phi,
//   grad_{A_l} = M_l + M_l^H,  M_l = |a_l><psi| + |e_l><phi|,
//   a_l = lambda w b_l + lambda (1 - w) r_l psi - c_l,  e_l = -b_l,
//   grad_{B_c} = g_c |psi><psi|,
// averaged over the points, plus the commutator penalty over the D + C matrices A_1..A_D, B_1..B_C.
// The objective is L = mean_t l_t + lambda mean_t [d_t^2 + w sigma_t^2] + gamma P(A_1..A_D, B), with
// w, the penalty kind, gamma (penalty_weight) and the degeneracy policy taken from LossSettings.
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>
#include <complex>
#include <stdexcept>
#include <vector>

#include "qgml/ground_state/degeneracy.hpp"
#include "qgml/linalg/hermitian_eigensolver.hpp"
#include "qgml/linalg/loops.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/train/loss_settings.hpp"
#include "qgml/train/supervised_loss.hpp"

#include "test_support.hpp"

namespace qgml::test {

// The combined objective: the supervised loss, lambda times the unsupervised loss of docs/math.md 3, and the
// penalty; settings.w, settings.penalty, settings.penalty_weight (gamma) and the degeneracy settings.
struct SupervisedObjective {
  SupervisedLoss loss = SupervisedLoss::mse;
  double huber_delta = default_huber_delta;
  double lambda = 0;
  LossSettings settings;
};

struct SupervisedReference {
  double loss = 0;            // mean_t l_t + lambda mean_t [d_t^2 + w sigma_t^2] + gamma P
  double supervised = 0;      // mean_t l_t
  double unsupervised = 0;    // mean_t [d_t^2 + w sigma_t^2]
  double penalty = 0;         // gamma P
  std::vector<double> y_hat;  // count x C
  int degenerate_points = 0;
  HostMatrices grad_a;              // D x N x N, Hermitian
  HostMatrix grad_b;                // N x N, Hermitian: grad_bs[0]
  std::vector<HostMatrix> grad_bs;  // C of them
};

namespace reference {

using Vector = std::vector<cplx>;

inline Vector apply(const HostMatrix& m, const Vector& v) {
  Vector r(v.size(), 0.0);
  for (int i = 0; i < m.n; ++i)
    for (int j = 0; j < m.n; ++j) r[i] += m(i, j) * v[j];
  return r;
}

inline cplx inner(const Vector& u, const Vector& v) {
  cplx s = 0;
  for (std::size_t i = 0; i < u.size(); ++i) s += std::conj(u[i]) * v[i];
  return s;
}

// m += alpha (|u><v| + |v><u|).
inline void add_symmetrized(HostMatrix& m, double alpha, const Vector& u, const Vector& v) {
  for (int i = 0; i < m.n; ++i)
    for (int j = 0; j < m.n; ++j) m(i, j) += alpha * (u[i] * std::conj(v[j]) + v[i] * std::conj(u[j]));
}

// Eigenpairs of a Hermitian matrix, ascending, by our Hermitian eigensolver (one serial solve).
struct Eigenpairs {
  std::vector<double> values;
  std::vector<Vector> vectors;
};

inline Eigenpairs eigenpairs(const HostMatrix& h) {
  const int n = h.n;
  Kokkos::View<Kokkos::complex<double>**, Kokkos::LayoutRight, Kokkos::HostSpace> a("qgml::test::reference::H", n, n),
      v("qgml::test::reference::V", n, n);
  Kokkos::View<double*, Kokkos::HostSpace> w("qgml::test::reference::w", n);
  std::vector<double> scratch(linalg::eigh_scratch_reals(n));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) a(i, j) = Kokkos::complex<double>(h(i, j).real(), h(i, j).imag());
  if (linalg::hermitian_eigh(linalg::SerialLoops{}, a, w, v, scratch.data()) != linalg::eigh_success)
    throw std::runtime_error("qgml::test::reference::eigenpairs: the eigensolver failed");
  Eigenpairs e;
  for (int m = 0; m < n; ++m) {
    e.values.push_back(w(m));
    Vector vm(n);
    for (int i = 0; i < n; ++i) vm[i] = cplx(v(m, i).real(), v(m, i).imag());
    e.vectors.push_back(vm);
  }
  return e;
}

// The penalty gamma P over the matrices m_0..m_{M-1} (P1 or P2 of docs/math.md 4.8 over every pair i < j), and
// its gradient added to grads: grad_{m_i} ||C_ij||^2 = 2 [C_ij, m_j], grad_{m_j} ||C_ij||^2 = 2 [m_i, C_ij],
// grad ||C|| = grad ||C||^2 / (2 ||C||), 0 where C = 0.
inline double add_penalty(const std::vector<HostMatrix>& m, PenaltyKind kind, double gamma,
                          std::vector<HostMatrix>& grads) {
  if (kind == PenaltyKind::none || gamma == 0) return 0;
  const bool squared = kind == PenaltyKind::frobenius_squared;
  double total = 0;
  for (std::size_t i = 0; i < m.size(); ++i)
    for (std::size_t j = i + 1; j < m.size(); ++j) {
      const HostMatrix ij = multiply(m[i], m[j]), ji = multiply(m[j], m[i]);
      HostMatrix c(m[i].n);
      for (std::size_t q = 0; q < c.a.size(); ++q) c.a[q] = ij.a[q] - ji.a[q];
      double norm2 = 0;
      for (const cplx& z : c.a) norm2 += std::norm(z);
      const double norm = std::sqrt(norm2);
      total += squared ? norm2 : norm;
      const double factor = gamma * (squared ? 2.0 : (norm > 0 ? 1.0 / norm : 0.0));
      const HostMatrix cmj = multiply(c, m[j]), mjc = multiply(m[j], c);
      const HostMatrix mic = multiply(m[i], c), cmi = multiply(c, m[i]);
      for (std::size_t q = 0; q < c.a.size(); ++q) {
        grads[i].a[q] += factor * (cmj.a[q] - mjc.a[q]);
        grads[j].a[q] += factor * (mic.a[q] - cmi.a[q]);
      }
    }
  return gamma * total;
}

}  // namespace reference

// The objective and its gradient for the points x (count x D, row-major) with targets y (count x
// target_columns(loss, C), row-major) and the C target operators bs.
inline SupervisedReference supervised_reference(const HostMatrices& a, const std::vector<HostMatrix>& bs,
                                                const std::vector<double>& x, const std::vector<double>& y,
                                                const SupervisedObjective& objective) {
  using reference::Vector;
  const int d = a.D, n = a.N, outputs = int(bs.size());
  const int columns = target_columns(objective.loss, outputs), count = d > 0 ? int(x.size()) / d : 0;
  if (outputs < 1 || int(x.size()) != count * d || int(y.size()) != count * columns || count == 0)
    throw std::runtime_error("qgml::test::supervised_reference: sizes do not match");
  for (const HostMatrix& b : bs)
    if (b.n != n) throw std::runtime_error("qgml::test::supervised_reference: B is not N x N");
  const LossSettings& s = objective.settings;
  const double w = s.w, lambda = objective.lambda, delta = objective.huber_delta;
  const double eta_rel = degeneracy_eta<double>(s), tol = degeneracy_tolerance<double>(s);
  SupervisedReference out;
  out.grad_a = HostMatrices{d, n, std::vector<cplx>(std::size_t(d) * n * n, 0.0)};
  out.grad_b = HostMatrix(n);
  std::vector<HostMatrix> am;
  for (int k = 0; k < d; ++k) am.push_back(matrix_of(a, k));
  std::vector<HostMatrix> grads(d + outputs, HostMatrix(n));
  for (int t = 0; t < count; ++t) {
    const double* xt = &x[std::size_t(t) * d];
    // H = 1/2 sum_k (A_k - x_k)^2.
    HostMatrix h(n);
    for (int k = 0; k < d; ++k) {
      HostMatrix shifted = am[k];
      for (int i = 0; i < n; ++i) shifted(i, i) -= xt[k];
      const HostMatrix sq = multiply(shifted, shifted);
      for (std::size_t q = 0; q < h.a.size(); ++q) h.a[q] += 0.5 * sq.a[q];
    }
    const reference::Eigenpairs eig = reference::eigenpairs(h);
    const Vector& psi = eig.vectors[0];
    const double e0 = eig.values[0], e_max = eig.values[n - 1];
    // y_k = A_k psi, xbar_k = <psi|y_k>, r = xbar - x, d^2 = |r|^2, sigma^2 = sum_k |y_k|^2 - xbar_k^2.
    std::vector<Vector> yk(d);
    std::vector<double> r(d);
    double d2 = 0, sigma2 = 0;
    for (int k = 0; k < d; ++k) {
      yk[k] = reference::apply(am[k], psi);
      const double xbar = reference::inner(psi, yk[k]).real();
      r[k] = xbar - xt[k];
      d2 += r[k] * r[k];
      sigma2 += reference::inner(yk[k], yk[k]).real() - xbar * xbar;
    }
    std::vector<Vector> beta;
    std::vector<double> y_hat;
    for (const HostMatrix& b : bs) {
      beta.push_back(reference::apply(b, psi));
      y_hat.push_back(reference::inner(psi, beta.back()).real());
      out.y_hat.push_back(y_hat.back());
    }
    const PointValues<double> output{y_hat.data()}, target{&y[std::size_t(t) * columns]};
    double log_partition = 0;
    const double l = point_loss(objective.loss, outputs, output, target, delta, log_partition);
    std::vector<double> half_dl;
    for (int c = 0; c < outputs; ++c)
      half_dl.push_back(point_half_derivative(objective.loss, outputs, output, target, delta, log_partition, c));
    out.supervised += l / count;
    out.unsupervised += (d2 + w * sigma2) / count;
    const bool degenerate = ground_state_degenerate(n, e0, n > 1 ? eig.values[1] : e0, e_max, tol);
    if (degenerate) ++out.degenerate_points;
    const double weight = (s.degeneracy == DegeneracyPolicy::skip && degenerate) ? 0.0 : 1.0 / count;
    // s = lambda (1 - w) sum_k r_k y_k + sum_c (g_c / 2) B_c psi;  phi = R s.
    Vector src(n, 0.0);
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < d; ++k) src[i] += lambda * (1 - w) * r[k] * yk[k][i];
      for (int c = 0; c < outputs; ++c) src[i] += half_dl[std::size_t(c)] * beta[std::size_t(c)][i];
    }
    const double eta = eta_rel * spectral_scale(e0, e_max);
    Vector phi(n, 0.0);
    for (int m = 1; m < n; ++m) {
      const cplx coefficient = regularized_inverse_gap(eig.values[m] - e0, eta) * reference::inner(eig.vectors[m], src);
      for (int i = 0; i < n; ++i) phi[i] += coefficient * eig.vectors[m][i];
    }
    // grad_{A_l} += weight (|a_l><psi| + |e_l><phi| + h.c.).
    for (int l = 0; l < d; ++l) {
      const Vector aphi = reference::apply(am[l], phi);
      Vector al(n), el(n);
      for (int i = 0; i < n; ++i) {
        const cplx bl = yk[l][i] - xt[l] * psi[i];
        const cplx cl = aphi[i] - xt[l] * phi[i];
        al[i] = lambda * w * bl + lambda * (1 - w) * r[l] * psi[i] - cl;
        el[i] = -bl;
      }
      reference::add_symmetrized(grads[l], weight, al, psi);
      reference::add_symmetrized(grads[l], weight, el, phi);
    }
    // grad_{B_c} += weight g_c |psi><psi| = weight (|(g_c/2) psi><psi| + h.c.).
    for (int c = 0; c < outputs; ++c) {
      Vector half(n);
      for (int i = 0; i < n; ++i) half[i] = half_dl[std::size_t(c)] * psi[i];
      reference::add_symmetrized(grads[std::size_t(d + c)], weight, half, psi);
    }
  }
  std::vector<HostMatrix> all = am;
  all.insert(all.end(), bs.begin(), bs.end());
  out.penalty = reference::add_penalty(all, s.penalty, s.penalty_weight, grads);
  out.loss = out.supervised + lambda * out.unsupervised + out.penalty;
  for (int l = 0; l < d; ++l)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) out.grad_a(l, i, j) = grads[l](i, j);
  out.grad_bs.assign(grads.begin() + d, grads.end());
  out.grad_b = out.grad_bs[0];
  return out;
}

// One target operator B and one target per point.
inline SupervisedReference supervised_reference(const HostMatrices& a, const HostMatrix& b,
                                                const std::vector<double>& x, const std::vector<double>& y,
                                                const SupervisedObjective& objective) {
  return supervised_reference(a, std::vector<HostMatrix>{b}, x, y, objective);
}

}  // namespace qgml::test
