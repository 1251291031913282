// Test matrices for the eigensolvers and the host-side checks of an eigendecomposition.
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "qgml/common/types.hpp"

#include "test_support.hpp"

namespace qgml::test {

// The families of Hermitian matrices every eigensolver must handle (issue: random, diagonal, exactly
// degenerate, all equal, clustered, zero, fuzzy sphere).
enum class MatrixKind {
  random,
  diagonal,
  degenerate_diag,
  degenerate_rotated,
  all_equal,
  clustered,
  zero,
  fuzzy_sphere
};

inline const std::vector<MatrixKind>& all_matrix_kinds() {
  static const std::vector<MatrixKind> kinds{MatrixKind::random,
                                             MatrixKind::diagonal,
                                             MatrixKind::degenerate_diag,
                                             MatrixKind::degenerate_rotated,
                                             MatrixKind::all_equal,
                                             MatrixKind::clustered,
                                             MatrixKind::zero,
                                             MatrixKind::fuzzy_sphere};
  return kinds;
}

inline std::string to_string(MatrixKind k) {
  switch (k) {
    case MatrixKind::random:
      return "random";
    case MatrixKind::diagonal:
      return "diagonal";
    case MatrixKind::degenerate_diag:
      return "diag(0,1,1,...)";
    case MatrixKind::degenerate_rotated:
      return "U diag(0,1,1,...) U^H";
    case MatrixKind::all_equal:
      return "2.5 I";
    case MatrixKind::clustered:
      return "clustered (gaps 1e-10)";
    case MatrixKind::zero:
      return "zero";
    case MatrixKind::fuzzy_sphere:
      return "fuzzy-sphere H(x)";
  }
  return "?";
}

// A Haar-random unitary (columns of the QR factor of a complex Gaussian matrix).
inline HostMatrix random_unitary(int n, std::uint64_t seed) {
  const CounterRng rng(seed, 777);
  HostMatrix u(n);
  for (int c = 0; c < n; ++c)
    for (int r = 0; r < n; ++r) u(r, c) = cplx(rng.normal(2 * (r * n + c)), rng.normal(2 * (r * n + c) + 1));
  for (int c = 0; c < n; ++c) {
    for (int pass = 0; pass < 2; ++pass)
      for (int p = 0; p < c; ++p) {
        cplx dot = 0;
        for (int r = 0; r < n; ++r) dot += std::conj(u(r, p)) * u(r, c);
        for (int r = 0; r < n; ++r) u(r, c) -= dot * u(r, p);
      }
    double norm = 0;
    for (int r = 0; r < n; ++r) norm += std::norm(u(r, c));
    for (int r = 0; r < n; ++r) u(r, c) /= std::sqrt(norm);
  }
  return u;
}

// U diag(lambda) U^H
inline HostMatrix rotate(const std::vector<double>& lambda, const HostMatrix& u) {
  const int n = u.n;
  HostMatrix h(n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      cplx s = 0;
      for (int k = 0; k < n; ++k) s += u(i, k) * lambda[k] * std::conj(u(j, k));
      h(i, j) = s;
    }
  for (int i = 0; i < n; ++i) {  // exactly Hermitian
    h(i, i) = h(i, i).real();
    for (int j = i + 1; j < n; ++j) h(j, i) = std::conj(h(i, j));
  }
  return h;
}

inline HostMatrix make_matrix(MatrixKind kind, int n, std::uint64_t seed) {
  const CounterRng rng(seed, 4242);
  HostMatrix h(n);
  switch (kind) {
    case MatrixKind::random: {
      const HostMatrices g = gaussian_hermitian_matrices(1, n, 1.0, seed);
      return matrix_of(g, 0);
    }
    case MatrixKind::diagonal:
      for (int i = 0; i < n; ++i) h(i, i) = 4 * rng.uniform(i) - 2;
      return h;
    case MatrixKind::degenerate_diag:
      for (int i = 1; i < n; ++i) h(i, i) = 1;
      return h;
    case MatrixKind::degenerate_rotated: {
      std::vector<double> lambda(n, 1.0);
      lambda[0] = 0;
      return rotate(lambda, random_unitary(n, seed));
    }
    case MatrixKind::all_equal:
      for (int i = 0; i < n; ++i) h(i, i) = 2.5;
      return h;
    case MatrixKind::clustered: {
      std::vector<double> lambda(n);
      for (int i = 0; i < n; ++i) lambda[i] = (i < n / 2) ? 1.0 + 1e-10 * i : 2.0 + 0.5 * i;
      return rotate(lambda, random_unitary(n, seed + 1));
    }
    case MatrixKind::zero:
      return h;
    case MatrixKind::fuzzy_sphere: {
      const HostMatrices s = spin_matrices(n);
      const double x[3] = {0.3, -0.5, 0.8};
      for (int k = 0; k < 3; ++k) {
        HostMatrix b = matrix_of(s, k);
        for (int i = 0; i < n; ++i) b(i, i) -= x[k];
        const HostMatrix b2 = multiply(b, b);
        for (int i = 0; i < n * n; ++i) h.a[i] += 0.5 * b2.a[i];
      }
      return h;
    }
  }
  return h;
}

struct EighCheck {
  double residual = 0;       // max_j |H v_j - w_j v_j| / max(|H|_F, 1e-300)
  double orthogonality = 0;  // max |V V^H - I|
  bool ascending = true;
};

// h: the input matrix (in double, as rounded to Real); w, v: the solver's output for it.
template <class WRow, class VMat>
EighCheck check_eigh(const HostMatrix& h, const WRow& w, const VMat& v) {
  const int n = h.n;
  EighCheck r;
  double hnorm = 0;
  for (auto x : h.a) hnorm += std::norm(x);
  hnorm = std::sqrt(hnorm);
  for (int j = 0; j < n; ++j) {
    if (j > 0 && !(w(j) >= w(j - 1))) r.ascending = false;
    double res = 0;
    for (int i = 0; i < n; ++i) {
      cplx s = 0;
      for (int l = 0; l < n; ++l) s += h(i, l) * cplx(v(j, l).real(), v(j, l).imag());
      s -= double(w(j)) * cplx(v(j, i).real(), v(j, i).imag());
      res += std::norm(s);
    }
    r.residual = std::max(r.residual, std::sqrt(res) / (hnorm > 0 ? hnorm : 1.0));
    for (int k = 0; k < n; ++k) {
      cplx dot = 0;
      for (int i = 0; i < n; ++i)
        dot += std::conj(cplx(v(j, i).real(), v(j, i).imag())) * cplx(v(k, i).real(), v(k, i).imag());
      r.orthogonality = std::max(r.orthogonality, std::abs(dot - (j == k ? 1.0 : 0.0)));
    }
  }
  return r;
}

template <class Real>
constexpr double eigh_tolerance() {
  return std::is_same_v<Real, float> ? 1e-5 : 1e-12;
}

}  // namespace qgml::test
