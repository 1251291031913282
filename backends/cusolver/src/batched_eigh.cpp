#include "qgml/cusolver/batched_eigh.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "qgml/cusolver/status.hpp"

namespace qgml::cusolver {

EighMethod resolve_method(EighMethod requested, int n) {
  if (requested == EighMethod::automatic)
    return n <= jacobi_batched_max_n ? EighMethod::jacobi_batched : EighMethod::heevd;
  QGML_REQUIRE(requested != EighMethod::jacobi_batched || n <= jacobi_batched_max_n,
               "qgml::cusolver: the batched Jacobi method takes N <= " + std::to_string(jacobi_batched_max_n) +
                   ", got N = " + std::to_string(n) + " (use EighMethod::heevd or automatic)");
  QGML_REQUIRE(requested != EighMethod::syev_batched || syev_batched_available(),
               "qgml::cusolver: cusolverDnXsyevBatched needs CUDA >= 12.6, this build has cuSOLVER of CUDA " +
                   std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10));
  return requested;
}

bool syev_batched_available() {
#if CUDART_VERSION >= 12060
  return true;
#else
  return false;
#endif
}

namespace detail {

// Typed entry points: Kokkos::complex<Real> has the layout of cuDoubleComplex / cuComplex.
inline cuDoubleComplex* vendor(Kokkos::complex<double>* p) { return reinterpret_cast<cuDoubleComplex*>(p); }
inline cuComplex* vendor(Kokkos::complex<float>* p) { return reinterpret_cast<cuComplex*>(p); }

constexpr cusolverEigMode_t jobz = CUSOLVER_EIG_MODE_VECTOR;
constexpr cublasFillMode_t uplo = CUBLAS_FILL_MODE_LOWER;

// Workspace queries read no matrix: null pointers, as only n and lda matter.
inline cusolverStatus_t heevj_batched_buffer_size(cusolverDnHandle_t h, int n, syevjInfo_t params, int batch,
                                                  int* lwork, double) {
  return cusolverDnZheevjBatched_bufferSize(h, jobz, uplo, n, nullptr, n, nullptr, lwork, params, batch);
}
inline cusolverStatus_t heevj_batched_buffer_size(cusolverDnHandle_t h, int n, syevjInfo_t params, int batch,
                                                  int* lwork, float) {
  return cusolverDnCheevjBatched_bufferSize(h, jobz, uplo, n, nullptr, n, nullptr, lwork, params, batch);
}
inline cusolverStatus_t heevd_buffer_size(cusolverDnHandle_t h, int n, int* lwork, double) {
  return cusolverDnZheevd_bufferSize(h, jobz, uplo, n, nullptr, n, nullptr, lwork);
}
inline cusolverStatus_t heevd_buffer_size(cusolverDnHandle_t h, int n, int* lwork, float) {
  return cusolverDnCheevd_bufferSize(h, jobz, uplo, n, nullptr, n, nullptr, lwork);
}

inline cusolverStatus_t heevj_batched(cusolverDnHandle_t h, int n, Kokkos::complex<double>* a, double* w,
                                      Kokkos::complex<double>* work, int lwork, int* info, syevjInfo_t params,
                                      int batch) {
  return cusolverDnZheevjBatched(h, jobz, uplo, n, vendor(a), n, w, vendor(work), lwork, info, params, batch);
}
inline cusolverStatus_t heevj_batched(cusolverDnHandle_t h, int n, Kokkos::complex<float>* a, float* w,
                                      Kokkos::complex<float>* work, int lwork, int* info, syevjInfo_t params,
                                      int batch) {
  return cusolverDnCheevjBatched(h, jobz, uplo, n, vendor(a), n, w, vendor(work), lwork, info, params, batch);
}
inline cusolverStatus_t heevd(cusolverDnHandle_t h, int n, Kokkos::complex<double>* a, double* w,
                              Kokkos::complex<double>* work, int lwork, int* info) {
  return cusolverDnZheevd(h, jobz, uplo, n, vendor(a), n, w, vendor(work), lwork, info);
}
inline cusolverStatus_t heevd(cusolverDnHandle_t h, int n, Kokkos::complex<float>* a, float* w,
                              Kokkos::complex<float>* work, int lwork, int* info) {
  return cusolverDnCheevd(h, jobz, uplo, n, vendor(a), n, w, vendor(work), lwork, info);
}

#if CUDART_VERSION >= 12060
// cusolverDnXsyevBatched's data types: A and the compute type complex, W real, of the same precision.
template <class Real>
struct SyevTypes;
template <>
struct SyevTypes<double> {
  static constexpr cudaDataType a = CUDA_C_64F, w = CUDA_R_64F;
};
template <>
struct SyevTypes<float> {
  static constexpr cudaDataType a = CUDA_C_32F, w = CUDA_R_32F;
};

template <class Real>
cusolverStatus_t syev_batched_buffer_size(cusolverDnHandle_t h, cusolverDnParams_t params, int n, int batch,
                                          std::size_t* device_bytes, std::size_t* host_bytes) {
  return cusolverDnXsyevBatched_bufferSize(h, params, jobz, uplo, n, SyevTypes<Real>::a, nullptr, n, SyevTypes<Real>::w,
                                           nullptr, SyevTypes<Real>::a, device_bytes, host_bytes, batch);
}
template <class Real>
cusolverStatus_t syev_batched(cusolverDnHandle_t h, cusolverDnParams_t params, int n, complex_t<Real>* a, Real* w,
                              void* device_work, std::size_t device_bytes, void* host_work, std::size_t host_bytes,
                              int* info, int batch) {
  return cusolverDnXsyevBatched(h, params, jobz, uplo, n, SyevTypes<Real>::a, a, n, SyevTypes<Real>::w, w,
                                SyevTypes<Real>::a, device_work, device_bytes, host_work, host_bytes, info, batch);
}
#endif

// The kernels below are named functors (docs/architecture.md "Host execution spaces in a CUDA build":
// an extended lambda's host wrapper also allocates at every launch).

// a = conj(h) elementwise, one team per matrix, and non_finite(t) = whether H(t) holds a NaN or Inf
// (its a is then zero, so that cuSOLVER never iterates on garbage). Read as column-major, the row-major
// H is H^T = conj(H); the conjugated copy is therefore H itself in cuSOLVER's layout, and the
// eigenvector columns cuSOLVER writes over it are contiguous: row j of V, V(t, j, i) = v_j(i).
template <class Real>
struct LoadConjugate {
  using member_type = Kokkos::TeamPolicy<Kokkos::Cuda>::member_type;
  const complex_t<Real>* h = nullptr;
  complex_t<Real>* a = nullptr;
  int* non_finite = nullptr;
  int nsq = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const int t = member.league_rank();
    const complex_t<Real>* ht = h + std::size_t(t) * nsq;
    complex_t<Real>* at = a + std::size_t(t) * nsq;
    int bad = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(member, nsq),
        [&](const int k, int& b) { b += (math::isfinite(ht[k].real()) && math::isfinite(ht[k].imag())) ? 0 : 1; }, bad);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, nsq),
                         [&](const int k) { at[k] = bad ? complex_t<Real>() : Kokkos::conj(ht[k]); });
    Kokkos::single(Kokkos::PerTeam(member), [&]() { non_finite[t] = bad != 0 ? 1 : 0; });
  }
};

template <class Real>
void load_conjugate(const Kokkos::Cuda& exec, int n, int count, const complex_t<Real>* h, complex_t<Real>* a,
                    int* non_finite) {
  using policy_type = Kokkos::TeamPolicy<Kokkos::Cuda>;
  const int nsq = n * n;
  const int team = std::min(128, (nsq + 31) / 32 * 32);
  Kokkos::parallel_for("qgml::cusolver::load_conjugate", policy_type(exec, count, team),
                       LoadConjugate<Real>{h, a, non_finite, nsq});
}

// cuSOLVER's info (0, or > 0 when it did not converge) to linalg::EighInfo; non-finite input: NaN w and V.
// Eigenvalues ascending, as qgml::batched_eigh promises: heevd in float returns members of a cluster
// (gaps 1e-10) up to an ulp out of order (seen on an H100, CUDA 13.0), so out-of-order neighbours are
// swapped with their eigenvector rows (an insertion sort: O(N) when already sorted).
template <class Real>
struct FinishSolve {
  Real* w = nullptr;
  complex_t<Real>* v = nullptr;
  int* info = nullptr;
  const int* non_finite = nullptr;
  Real nan = 0;
  int n = 0, nsq = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int t) const {
    if (non_finite[t]) {
      for (int j = 0; j < n; ++j) w[std::size_t(t) * n + j] = nan;
      for (int k = 0; k < nsq; ++k) v[std::size_t(t) * nsq + k] = complex_t<Real>(nan, nan);
      info[t] = linalg::eigh_non_finite_input;
    } else {
      info[t] = info[t] == 0 ? linalg::eigh_success : linalg::eigh_not_converged;
      Real* wt = w + std::size_t(t) * n;
      complex_t<Real>* vt = v + std::size_t(t) * nsq;
      for (int j = 1; j < n; ++j)
        for (int k = j; k > 0 && wt[k] < wt[k - 1]; --k) {
          const Real e = wt[k];
          wt[k] = wt[k - 1];
          wt[k - 1] = e;
          for (int i = 0; i < n; ++i) {
            const complex_t<Real> z = vt[k * n + i];
            vt[k * n + i] = vt[(k - 1) * n + i];
            vt[(k - 1) * n + i] = z;
          }
        }
    }
  }
};

template <class Real>
void finish(const Kokkos::Cuda& exec, int n, int count, Real* w, complex_t<Real>* v, int* info, const int* non_finite) {
  Kokkos::parallel_for("qgml::cusolver::finish", Kokkos::RangePolicy<Kokkos::Cuda>(exec, 0, count),
                       FinishSolve<Real>{w, v, info, non_finite, std::numeric_limits<Real>::quiet_NaN(), n, n * n});
}

}  // namespace detail

template <class Real>
struct BatchedEigh<Real>::Impl {
  int n = 0;
  int max_batch = 0;
  EighMethod method = EighMethod::automatic;
  cusolverDnHandle_t handle = nullptr;  // bound to the caller's stream at every solve
  syevjInfo_t params = nullptr;         // jacobi_batched
#if CUDART_VERSION >= 12060
  cusolverDnParams_t syev_params = nullptr;  // syev_batched
#endif
  std::size_t device_bytes = 0;  // syev_batched: workspace per call
  int syev_slice = 0;            // syev_batched: matrices per call (its workspace grows with the batch)
  std::vector<char> host_work;   // syev_batched: the host workspace cuSOLVER asks for
  // heevd over streams: one handle, stream and join event per stream; fork orders them after the load.
  std::vector<cudaStream_t> side_streams;
  std::vector<cusolverDnHandle_t> side_handles;
  std::vector<cudaEvent_t> joins;
  cudaEvent_t fork = nullptr;
  int lwork = 0;          // complex elements per handle that solves
  bool launched = false;  // whether the destructor has work to wait for
  Kokkos::View<complex_t<Real>*, Kokkos::CudaSpace> work;
  Kokkos::View<int*, Kokkos::CudaSpace> non_finite;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  // Waits for the streams this solver last ran on, then releases what it created (errors ignored:
  // a destructor does not throw).
  ~Impl() {
    cudaStream_t last = nullptr;
    if (launched && cusolverDnGetStream(handle, &last) == CUSOLVER_STATUS_SUCCESS) cudaStreamSynchronize(last);
    if (launched)
      for (cudaStream_t s : side_streams) cudaStreamSynchronize(s);
    for (cusolverDnHandle_t h : side_handles) cusolverDnDestroy(h);
    for (cudaStream_t s : side_streams) cudaStreamDestroy(s);
    for (cudaEvent_t e : joins) cudaEventDestroy(e);
    if (fork) cudaEventDestroy(fork);
    if (params) cusolverDnDestroySyevjInfo(params);
#if CUDART_VERSION >= 12060
    if (syev_params) cusolverDnDestroyParams(syev_params);
#endif
    if (handle) cusolverDnDestroy(handle);
  }
};

template <class Real>
BatchedEigh<Real>::BatchedEigh(int n, int max_batch, const EighOptions& options) : impl_(std::make_unique<Impl>()) {
  QGML_REQUIRE(
      n >= 1 && max_batch >= 1 && options.streams >= 1,
      "qgml::cusolver::BatchedEigh: N, the batch size and the stream count must be >= 1, got N = " + std::to_string(n) +
          ", batch = " + std::to_string(max_batch) + ", streams = " + std::to_string(options.streams));
  Impl& s = *impl_;
  s.n = n;
  s.max_batch = max_batch;
  s.method = resolve_method(options.method, n);
  QGML_CUSOLVER_CHECK(cusolverDnCreate(&s.handle), n, max_batch);
  int regions = 1;
  if (s.method == EighMethod::jacobi_batched) {
    QGML_CUSOLVER_CHECK(cusolverDnCreateSyevjInfo(&s.params), n, max_batch);
    if (options.tolerance > 0)
      QGML_CUSOLVER_CHECK(cusolverDnXsyevjSetTolerance(s.params, options.tolerance), n, max_batch);
    if (options.max_sweeps > 0)
      QGML_CUSOLVER_CHECK(cusolverDnXsyevjSetMaxSweeps(s.params, options.max_sweeps), n, max_batch);
    QGML_CUSOLVER_CHECK(cusolverDnXsyevjSetSortEig(s.params, 1), n, max_batch);
    QGML_CUSOLVER_CHECK(detail::heevj_batched_buffer_size(s.handle, n, s.params, max_batch, &s.lwork, Real()), n,
                        max_batch);
  } else if (s.method == EighMethod::syev_batched) {
#if CUDART_VERSION >= 12060
    QGML_CUSOLVER_CHECK(cusolverDnCreateParams(&s.syev_params), n, max_batch);
    // cuSOLVER's workspace for one call grows with the batch (37 GB for N = 32 and 25000 matrices, seen
    // on an H200 with CUDA 13.0): the batch is halved until it asks for at most options.syev_workspace_bytes.
    std::size_t host_bytes = 0;
    s.syev_slice = max_batch;
    for (;;) {
      QGML_CUSOLVER_CHECK(detail::syev_batched_buffer_size<Real>(s.handle, s.syev_params, n, s.syev_slice,
                                                                 &s.device_bytes, &host_bytes),
                          n, s.syev_slice);
      if (s.device_bytes <= options.syev_workspace_bytes || s.syev_slice == 1) break;
      s.syev_slice = (s.syev_slice + 1) / 2;
    }
    s.host_work.resize(std::max<std::size_t>(host_bytes, 1));
#endif
  } else {
    QGML_CUSOLVER_CHECK(detail::heevd_buffer_size(s.handle, n, &s.lwork, Real()), n, max_batch);
    const int streams = std::min(options.streams, max_batch);
    if (streams > 1) {
      for (int k = 0; k < streams; ++k) {
        s.side_streams.push_back(nullptr);
        QGML_CUSOLVER_CHECK(cudaStreamCreateWithFlags(&s.side_streams.back(), cudaStreamNonBlocking), n, max_batch);
        s.side_handles.push_back(nullptr);
        QGML_CUSOLVER_CHECK(cusolverDnCreate(&s.side_handles.back()), n, max_batch);
        QGML_CUSOLVER_CHECK(cusolverDnSetStream(s.side_handles.back(), s.side_streams.back()), n, max_batch);
        s.joins.push_back(nullptr);
        QGML_CUSOLVER_CHECK(cudaEventCreateWithFlags(&s.joins.back(), cudaEventDisableTiming), n, max_batch);
      }
      QGML_CUSOLVER_CHECK(cudaEventCreateWithFlags(&s.fork, cudaEventDisableTiming), n, max_batch);
      regions = streams;
    }
  }
  const std::size_t elements =
      s.method == EighMethod::syev_batched
          ? std::max<std::size_t>((s.device_bytes + sizeof(complex_t<Real>) - 1) / sizeof(complex_t<Real>), 1)
          : std::size_t(std::max(s.lwork, 1)) * regions;
  s.work = decltype(s.work)(Kokkos::view_alloc(Kokkos::WithoutInitializing, "qgml::cusolver::workspace"), elements);
  s.non_finite =
      decltype(s.non_finite)(Kokkos::view_alloc(Kokkos::WithoutInitializing, "qgml::cusolver::non_finite"), max_batch);
}

template <class Real>
BatchedEigh<Real>::~BatchedEigh() = default;
template <class Real>
BatchedEigh<Real>::BatchedEigh(BatchedEigh&&) noexcept = default;
template <class Real>
BatchedEigh<Real>& BatchedEigh<Real>::operator=(BatchedEigh&&) noexcept = default;

template <class Real>
int BatchedEigh<Real>::n() const {
  return impl_->n;
}
template <class Real>
int BatchedEigh<Real>::max_batch() const {
  return impl_->max_batch;
}
template <class Real>
EighMethod BatchedEigh<Real>::method() const {
  return impl_->method;
}
template <class Real>
int BatchedEigh<Real>::streams() const {
  return impl_->side_streams.empty() ? 1 : int(impl_->side_streams.size());
}
template <class Real>
std::size_t BatchedEigh<Real>::workspace_bytes() const {
  return impl_->work.size() * sizeof(complex_t<Real>) + impl_->non_finite.size() * sizeof(int);
}

template <class Real>
void BatchedEigh<Real>::launch(const Kokkos::Cuda& exec, int count, const complex_t<Real>* h, Real* w,
                               complex_t<Real>* v, int* info) {
  Impl& s = *impl_;
  const ScopedRegion region("qgml::cusolver::batched_eigh");
  const int n = s.n;
  const std::size_t nsq = std::size_t(n) * n;
  const cudaStream_t stream = exec.cuda_stream();
  QGML_CUSOLVER_CHECK(cusolverDnSetStream(s.handle, stream), n, count);
  s.launched = true;
  // V is the working array: cuSOLVER overwrites the matrix with its eigenvectors in place.
  for (int begin = 0; begin < count; begin += s.max_batch) {
    const int size = std::min(s.max_batch, count - begin);
    complex_t<Real>* a = v + begin * nsq;
    Real* wb = w + std::size_t(begin) * n;
    int* ib = info + begin;
    detail::load_conjugate<Real>(exec, n, size, h + begin * nsq, a, s.non_finite.data());
    if (s.method == EighMethod::jacobi_batched) {
      QGML_CUSOLVER_CHECK(detail::heevj_batched(s.handle, n, a, wb, s.work.data(), s.lwork, ib, s.params, size), n,
                          size);
    } else if (s.method == EighMethod::syev_batched) {
#if CUDART_VERSION >= 12060
      for (int at = 0; at < size; at += s.syev_slice) {
        const int part = std::min(s.syev_slice, size - at);
        QGML_CUSOLVER_CHECK(detail::syev_batched<Real>(s.handle, s.syev_params, n, a + at * nsq,
                                                       wb + std::size_t(at) * n, s.work.data(), s.device_bytes,
                                                       s.host_work.data(), s.host_work.size(), ib + at, part),
                            n, part);
      }
#endif
    } else if (s.side_streams.empty()) {
      for (int t = 0; t < size; ++t)
        QGML_CUSOLVER_CHECK(
            detail::heevd(s.handle, n, a + t * nsq, wb + std::size_t(t) * n, s.work.data(), s.lwork, ib + t), n, size);
    } else {
      const int streams = int(s.side_streams.size());
      QGML_CUSOLVER_CHECK(cudaEventRecord(s.fork, stream), n, size);
      for (int k = 0; k < streams; ++k) QGML_CUSOLVER_CHECK(cudaStreamWaitEvent(s.side_streams[k], s.fork, 0), n, size);
      for (int t = 0; t < size; ++t) {
        const int k = t % streams;
        QGML_CUSOLVER_CHECK(detail::heevd(s.side_handles[k], n, a + t * nsq, wb + std::size_t(t) * n,
                                          s.work.data() + std::size_t(k) * s.lwork, s.lwork, ib + t),
                            n, size);
      }
      for (int k = 0; k < streams; ++k) {
        QGML_CUSOLVER_CHECK(cudaEventRecord(s.joins[k], s.side_streams[k]), n, size);
        QGML_CUSOLVER_CHECK(cudaStreamWaitEvent(stream, s.joins[k], 0), n, size);
      }
    }
    detail::finish<Real>(exec, n, size, wb, a, ib, s.non_finite.data());
  }
}

template class BatchedEigh<double>;
template class BatchedEigh<float>;

}  // namespace qgml::cusolver
