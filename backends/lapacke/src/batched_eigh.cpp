#include "qgml/lapacke/batched_eigh.hpp"

#include <cmath>
#include <lapacke.h>
#include <limits>

#ifdef QGML_HAVE_OPENBLAS
extern "C" void openblas_set_num_threads(int);
extern "C" int openblas_get_num_threads(void);
#endif

namespace qgml::lapacke {

int lapacke_use_single_threaded_blas() {
#ifdef QGML_HAVE_OPENBLAS
  const int previous = openblas_get_num_threads();
  openblas_set_num_threads(1);
  return previous;
#else
  return 1;
#endif
}

void lapacke_restore_blas_threads([[maybe_unused]] int threads) {
#ifdef QGML_HAVE_OPENBLAS
  openblas_set_num_threads(threads);
#endif
}

// Sizes of LAPACK's documented minimal workspaces for jobz = 'V': lwork 2N + N^2, lrwork
// 1 + 5N + 2N^2, liwork 3 + 5N.
template <class Real>
LapackeEighWorkspace<Real>::LapackeEighWorkspace(int n_)
    : n(n_),
      a(std::size_t(n_) * n_),
      work(std::size_t(2 * n_ + n_ * n_)),
      rwork(std::size_t(1 + 5 * n_ + 2 * n_ * n_)),
      iwork(std::size_t(3 + 5 * n_)) {}

template <class Real>
int lapacke_eigh(int n, const std::complex<Real>* a, Real* w, std::complex<Real>* v, LapackeEighWorkspace<Real>& ws) {
  for (int i = 0; i < n * n; ++i) {
    if (!std::isfinite(a[i].real()) || !std::isfinite(a[i].imag())) {
      for (int j = 0; j < n; ++j) w[j] = std::numeric_limits<Real>::quiet_NaN();
      for (int j = 0; j < n * n; ++j) v[j] = {std::numeric_limits<Real>::quiet_NaN(), 0};
      return linalg::eigh_non_finite_input;
    }
  }
  // Read as column-major, the row-major H is H^T = conj(H): same eigenvalues, conjugated eigenvectors,
  // returned in contiguous columns = our rows.
  std::copy(a, a + std::size_t(n) * n, ws.a.data());
  lapack_int rc;
  if constexpr (std::is_same_v<Real, double>) {
    rc =
        LAPACKE_zheevd_work(LAPACK_COL_MAJOR, 'V', 'L', n, reinterpret_cast<lapack_complex_double*>(ws.a.data()), n, w,
                            reinterpret_cast<lapack_complex_double*>(ws.work.data()), lapack_int(ws.work.size()),
                            ws.rwork.data(), lapack_int(ws.rwork.size()), ws.iwork.data(), lapack_int(ws.iwork.size()));
  } else {
    rc =
        LAPACKE_cheevd_work(LAPACK_COL_MAJOR, 'V', 'L', n, reinterpret_cast<lapack_complex_float*>(ws.a.data()), n, w,
                            reinterpret_cast<lapack_complex_float*>(ws.work.data()), lapack_int(ws.work.size()),
                            ws.rwork.data(), lapack_int(ws.rwork.size()), ws.iwork.data(), lapack_int(ws.iwork.size()));
  }
  if (rc != 0) return linalg::eigh_not_converged;
  for (int i = 0; i < n * n; ++i) v[i] = std::conj(ws.a[i]);
  return linalg::eigh_success;
}

template struct LapackeEighWorkspace<double>;
template struct LapackeEighWorkspace<float>;
template int lapacke_eigh<double>(int, const std::complex<double>*, double*, std::complex<double>*,
                                  LapackeEighWorkspace<double>&);
template int lapacke_eigh<float>(int, const std::complex<float>*, float*, std::complex<float>*,
                                 LapackeEighWorkspace<float>&);

}  // namespace qgml::lapacke
