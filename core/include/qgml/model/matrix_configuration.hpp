// A matrix configuration: D Hermitian N x N matrices A_1 .. A_D on the device (docs/math.md 2.1), with the
// square sum S = 1/2 sum_k A_k^2 that every Hamiltonian evaluation reuses.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/linalg/blas_gemm.hpp"

namespace qgml {

namespace detail {

// Kernels are named functors, not device lambdas: docs/architecture.md "Host execution spaces in a CUDA build".
// S_ij = 1/2 sum_k sum_l (A_k)_il (A_k)_lj for one entry (i, j) with i >= j, l ascending, and
// S_ji = conj(S_ij): S is Hermitian bit for bit (its diagonal real). Entries with i < j do nothing.
template <class Real, class MemorySpace>
struct SquareSum {
  using complex_type = complex_t<Real>;
  MatrixStack<Real, MemorySpace> a;
  Matrix<Real, MemorySpace> s;
  int n = 0, d = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int ij) const {
    const int i = ij / n;
    const int j = ij % n;
    if (i < j) return;
    complex_type sum(0);
    for (int k = 0; k < d; ++k) {
      for (int l = 0; l < n; ++l) sum += a(k, i, l) * a(k, l, j);
    }
    sum *= Real(0.5);
    if (i == j) sum = complex_type(sum.real(), Real(0));
    s(i, j) = sum;
    s(j, i) = Kokkos::conj(sum);
  }
};

// S_ji = conj(S_ij) for i > j and Im S_ii = 0, from the lower triangle: one entry (i, j).
template <class Real, class MemorySpace>
struct MirrorLowerTriangle {
  Matrix<Real, MemorySpace> s;
  int n = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int ij) const {
    const int i = ij / n;
    const int j = ij % n;
    if (i > j)
      s(j, i) = Kokkos::conj(s(i, j));
    else if (i == j)
      s(i, i) = complex_t<Real>(s(i, i).real(), Real(0));
  }
};

// S = 1/2 sum_k A_k^2 (docs/math.md 2.1) on exec, Hermitian bit for bit: with use_gemm, S = sum_k (1/2) A_k A_k
// by D calls of KokkosBlas::gemm (k ascending, beta = 1 after the first), then the upper triangle set
// from the lower; else the SquareSum kernel. use_gemm requires blas_gemm_usable(exec, N^2).
template <class Real, class ExecSpace>
void compute_square_sum(const ExecSpace& exec, const MatrixStack<Real, typename ExecSpace::memory_space>& a,
                        const Matrix<Real, typename ExecSpace::memory_space>& s, const bool use_gemm) {
  using memory_space = typename ExecSpace::memory_space;
  const int d = static_cast<int>(a.extent(0));
  const int n = static_cast<int>(a.extent(1));
  QGML_REQUIRE(!use_gemm || blas_gemm_usable(exec, (long long)n * n),
               "qgml::detail::compute_square_sum: KokkosBlas::gemm cannot run this product on this execution space");
#if defined(QGML_HAVE_KOKKOSKERNELS)
  if (use_gemm) {
    using complex_type = complex_t<Real>;
    for (int k = 0; k < d; ++k) {
      const auto ak = Kokkos::subview(a, k, Kokkos::ALL, Kokkos::ALL);
      KokkosBlas::gemm("N", "N", complex_type(Real(0.5)), ak, ak, complex_type(k == 0 ? Real(0) : Real(1)), s);
    }
    Kokkos::parallel_for("qgml::MatrixConfiguration::mirror_square_sum", Kokkos::RangePolicy<ExecSpace>(exec, 0, n * n),
                         MirrorLowerTriangle<Real, memory_space>{s, n});
    return;
  }
#endif
  Kokkos::parallel_for("qgml::MatrixConfiguration::update_square_sum", Kokkos::RangePolicy<ExecSpace>(exec, 0, n * n),
                       SquareSum<Real, memory_space>{a, s, n, d});
}

// (A_k)_ij <- ((A_k)_ij + conj((A_k)_ji)) / 2 for i <= j, mirrored to (j, i): one entry (k, i, j).
template <class Real, class MemorySpace>
struct ProjectHermitian {
  using complex_type = complex_t<Real>;
  MatrixStack<Real, MemorySpace> a;
  int n = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int kij) const {
    const int k = kij / (n * n);
    const int i = (kij / n) % n;
    const int j = kij % n;
    if (i < j) {
      const complex_type m = Real(0.5) * (a(k, i, j) + Kokkos::conj(a(k, j, i)));
      a(k, i, j) = m;
      a(k, j, i) = Kokkos::conj(m);
    } else if (i == j) {
      a(k, i, i) = complex_type(a(k, i, i).real(), Real(0));
    }
  }
};

// max over (k, i, j) of |(A_k)_ij - conj((A_k)_ji)|.
template <class Real, class MemorySpace>
struct HermiticityError {
  using value_type = Real;
  MatrixStack<Real, MemorySpace> a;
  int n = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int kij, Real& m) const {
    const int k = kij / (n * n);
    const int i = (kij / n) % n;
    const int j = kij % n;
    const Real e = Kokkos::abs(a(k, i, j) - Kokkos::conj(a(k, j, i)));
    if (e > m) m = e;
  }
};

}  // namespace detail

template <class Real = default_real, class ExecSpace = Kokkos::DefaultExecutionSpace>
class MatrixConfiguration {
  static_assert(is_supported_real_v<Real>, "qgml::MatrixConfiguration: Real must be float or double");

 public:
  using real_type = Real;
  using complex_type = complex_t<Real>;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  using matrices_type = MatrixStack<Real, memory_space>;
  using matrix_type = Matrix<Real, memory_space>;

  MatrixConfiguration() = default;

  // D zero matrices of size N x N.
  MatrixConfiguration(int D, int N, const ExecSpace& exec)
      : a_(Kokkos::view_alloc(exec, std::string("qgml::MatrixConfiguration::A")), check_d(D), check_n(N), N),
        s_(Kokkos::view_alloc(exec, std::string("qgml::MatrixConfiguration::S")), N, N) {}

  // Takes ownership of existing matrices (D x N x N, assumed Hermitian) and computes S on exec.
  explicit MatrixConfiguration(matrices_type a, const ExecSpace& exec)
      : a_(a), s_(Kokkos::view_alloc(exec, std::string("qgml::MatrixConfiguration::S")), a.extent(1), a.extent(2)) {
    QGML_REQUIRE(a.extent(1) == a.extent(2), "qgml::MatrixConfiguration: matrices must be square, got " +
                                                 std::to_string(a.extent(1)) + " x " + std::to_string(a.extent(2)));
    update_square_sum(exec);
  }

  // Number of matrices D (= the dimension of the data space).
  int dimension() const { return static_cast<int>(a_.extent(0)); }
  // Hilbert-space dimension N.
  int matrix_size() const { return static_cast<int>(a_.extent(1)); }  // N

  // The matrices A(k, i, j) = (A_k)_{ij}. After changing them call update_square_sum().
  const matrices_type& matrices() const { return a_; }
  // S = 1/2 sum_k A_k^2, valid after the last update_square_sum().
  const matrix_type& square_sum() const { return s_; }

  // S_ij = 1/2 sum_k sum_l (A_k)_il (A_k)_lj (docs/math.md 2.1), Hermitian bit for bit; by GEMM where
  // detail::configuration_products_use_gemm (linalg/blas_gemm.hpp).
  void update_square_sum(const ExecSpace& exec) {
    detail::compute_square_sum<Real>(exec, a_, s_, detail::configuration_products_use_gemm(exec, matrix_size()));
  }

  // A_k <- (A_k + A_k^H) / 2, then S is recomputed.
  void project_hermitian(const ExecSpace& exec) {
    const auto a = a_;
    const int n = matrix_size();
    const int d = dimension();
    Kokkos::parallel_for("qgml::MatrixConfiguration::project_hermitian",
                         Kokkos::RangePolicy<ExecSpace>(exec, 0, d * n * n),
                         detail::ProjectHermitian<Real, memory_space>{a, n});
    update_square_sum(exec);
  }

 private:
  static int check_d(int d) {
    QGML_REQUIRE(d >= 1, "qgml::MatrixConfiguration: the number of matrices D must be >= 1, got " + std::to_string(d));
    return d;
  }
  static int check_n(int n) {
    QGML_REQUIRE(n >= 1, "qgml::MatrixConfiguration: the matrix size N must be >= 1, got " + std::to_string(n));
    return n;
  }

  matrices_type a_;
  matrix_type s_;
};

// max_k max_ij |A_k - A_k^H|_ij, computed on the device (0 for an exactly Hermitian configuration).
template <class Real, class ExecSpace>
Real hermiticity_error(const MatrixConfiguration<Real, ExecSpace>& config, const ExecSpace& exec) {
  const auto a = config.matrices();
  const int n = config.matrix_size();
  Real err = 0;
  Kokkos::parallel_reduce(
      "qgml::hermiticity_error", Kokkos::RangePolicy<ExecSpace>(exec, 0, config.dimension() * n * n),
      detail::HermiticityError<Real, typename ExecSpace::memory_space>{a, n}, Kokkos::Max<Real>(err));
  return err;
}

}  // namespace qgml
