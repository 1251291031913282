// Symmetric tridiagonal test matrices and reference eigenvalues by bisection on Sturm counts
// (ground_state/tridiagonal_ground_state.hpp), shared by the tests of the tridiagonal eigenvalue routines.
#pragma once

#include <cmath>
#include <random>
#include <vector>

#include "qgml/ground_state/tridiagonal_ground_state.hpp"

namespace qgml::test {

struct Tridiagonal {
  std::vector<double> d, e;  // e.size() == d.size() - 1 (n = 1: empty)
};

inline Tridiagonal random_tridiagonal(int n, unsigned seed, double scale = 1) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  Tridiagonal t;
  for (int i = 0; i < n; ++i) t.d.push_back(scale * normal(rng));
  for (int i = 0; i + 1 < n; ++i) t.e.push_back(scale * normal(rng));
  return t;
}

// -1 on the off-diagonal, 2 on the diagonal: eigenvalues 2 - 2 cos(pi k / (n + 1)), k = 1 .. n.
inline Tridiagonal laplacian(int n) {
  Tridiagonal t;
  t.d.assign(n, 2.0);
  t.e.assign(n > 0 ? n - 1 : 0, -1.0);
  return t;
}

template <class Real>
Real spectral_norm_bound(const Tridiagonal& t) {
  double m = 0;
  for (std::size_t i = 0; i < t.d.size(); ++i) {
    const double row =
        std::fabs(t.d[i]) + (i > 0 ? std::fabs(t.e[i - 1]) : 0.0) + (i + 1 < t.d.size() ? std::fabs(t.e[i]) : 0.0);
    m = row > m ? row : m;
  }
  return Real(m);
}

// The k-th smallest eigenvalue of t rounded to Real, by bisection, in double.
template <class Real>
double bisection_eigenvalue(const Tridiagonal& t, int k) {
  const int n = static_cast<int>(t.d.size());
  std::vector<double> d(n), e(n, 0.0);
  for (int i = 0; i < n; ++i) d[i] = double(Real(t.d[i]));
  for (int i = 0; i + 1 < n; ++i) e[i] = double(Real(t.e[i]));
  return linalg::tridiagonal_eigenvalue(n, d.data(), e.data(), k);
}

template <class Real>
double bisection_e0(const Tridiagonal& t) {
  return bisection_eigenvalue<Real>(t, 0);
}

template <class Real>
double bisection_emax(const Tridiagonal& t) {
  return bisection_eigenvalue<Real>(t, static_cast<int>(t.d.size()) - 1);
}

// The lanes of a pack: 8 in double, 16 in float (linalg::packed_eigh_width).
template <class Real>
constexpr int pack_width() {
  return sizeof(Real) == sizeof(double) ? 8 : 16;
}

}  // namespace qgml::test
