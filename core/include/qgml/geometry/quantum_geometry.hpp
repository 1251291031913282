// Quantum geometry of the ground state per point (docs/math.md 5.1-5.3). Three implementations (GeometryKernel):
// by default from the ground state alone with one tridiagonal solve per coordinate direction, one SIMD
// pack of points per thread on CPUs (ground_state_geometry_packed.hpp) or one team per point
// (ground_state_geometry.hpp, the GPU kernel); or from one whole eigendecomposition of H(x) and the sums
// over states below. The ground-state terms come from the same pass (docs/math.md 2.2, 2.3): E_0,
// xbar_k = <psi_0|A_k|psi_0>, sigma^2; so an analysis needs no second eigensolve.
// With W_{n,mu} = <n|A_mu|psi_0> and gaps g_n = E_n - E_0 (n >= 1):
//   quantum metric (Eq. 7)  g_{mu,nu} = 2 Re sum_n conj(W_{n,mu}) W_{n,nu} / g_n  = d xbar_mu / d x_nu
//   covariance metric        g_{mu,nu} = 2 Re sum_n conj(W_{n,mu}) W_{n,nu}        (every gap set to 1)
//   geometric tensor         Q_{mu,nu} = sum_n conj(W_{n,mu}) W_{n,nu} / g_n^2,
//   Fubini-Study metric      Re Q,       Berry curvature  F_{mu,nu} = -2 Im Q.
// 1/g_n is the regularised inverse of degeneracy.hpp, so an exactly degenerate ground state gives a
// finite (zero) contribution instead of Inf/NaN. The metric's eigenvalues (descending) and the
// dimension estimate of dimension_estimate.hpp follow per point.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <string>

#include "qgml/common/explicit_instances.hpp"
#include "qgml/common/line_aligned_scratch.hpp"
#include "qgml/common/memory_budget.hpp"
#include "qgml/geometry/dimension_estimate.hpp"
#include "qgml/geometry/ground_state_geometry.hpp"
#include "qgml/geometry/ground_state_geometry_packed.hpp"
#include "qgml/geometry/tangent_spread.hpp"
#include "qgml/ground_state/degeneracy.hpp"
#include "qgml/ground_state/ground_state_terms.hpp"
#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/linalg/symmetric_eigenvalues.hpp"
#include "qgml/linalg/team_shape.hpp"
#include "qgml/model/hamiltonian.hpp"
#include "qgml/model/matrix_configuration.hpp"
#include "qgml/plan/kernel_rules.hpp"

namespace qgml {

enum class MetricKind { quantum, covariance, fubini_study };

MetricKind parse_metric_kind(const std::string& s);
std::string to_string(MetricKind k);

// How QuantumGeometry::compute gets the per-point terms (GeometryKernel, plan/kernel_kinds.hpp; the
// automatic choice is plan::geometry_kernel). packed and team solve for the ground state only, with one
// tridiagonal solve per coordinate direction: packed with one thread per SIMD pack of points
// (ground_state_geometry_packed.hpp, host spaces only), team with one team per point
// (ground_state_geometry.hpp); separate runs batched_eigh for the whole spectrum and sums over states
// (GeometryTensors below).

struct GeometrySettings {
  MetricKind metric = MetricKind::quantum;  // the metric whose spectrum gives the dimension
  bool geometric_tensor = false;            // also fill fubini_study() and berry_curvature()
  DimensionEstimatorSettings estimator;
  double degeneracy_eta = -1;  // relative regulariser of 1/g; < 0: default_degeneracy_tolerance
  GeometryKernel kernel = GeometryKernel::automatic;
  TeamShape team_shape = {};     // how the team kernel lays points on teams (linalg/team_shape.hpp)
  TangentSpreadSettings spread;  // the data's check of the tangent directions (geometry/tangent_spread.hpp)
};

namespace detail {

// Per point t: the ground-state terms, W_{m,mu} = <m|A_mu|psi_0>, the metric of `kind` and, with
// `tensor`, the Fubini-Study metric and the Berry curvature.
template <class Real, class MemorySpace, class PointsView>
struct GeometryTensors {
  using complex_type = complex_t<Real>;
  using tensor_type = Kokkos::View<Real***, Kokkos::LayoutRight, MemorySpace>;
  MatrixStack<Real, MemorySpace> a, v, proj;
  RealMatrix<Real, MemorySpace> w, xbar;
  RealVector<Real, MemorySpace> energy, sigma2;
  PointsView x;
  tensor_type metric, fs, berry;
  int kind = 0;
  bool tensor = false;
  Real eta_rel = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int t) const {
    const int d = static_cast<int>(a.extent(0)), n = static_cast<int>(a.extent(1));
    for (int mu = 0; mu < d; ++mu)
      for (int m = 0; m < n; ++m) proj(t, m, mu) = complex_type(0);
    const auto terms = ground_state_terms<Real>(
        a, Kokkos::subview(v, t, 0, Kokkos::ALL), Kokkos::subview(x, t, Kokkos::ALL),
        Kokkos::subview(xbar, t, Kokkos::ALL), [&](const int mu, const int i, const complex_type& y) {
          for (int m = 0; m < n; ++m) proj(t, m, mu) += Kokkos::conj(v(t, m, i)) * y;
        });
    const Real e0 = w(t, 0);
    energy(t) = e0;
    sigma2(t) = terms.sigma2;
    const Real eta = eta_rel * spectral_scale(e0, w(t, n - 1));
    const bool fubini_study = kind == int(MetricKind::fubini_study);
    for (int mu = 0; mu < d; ++mu)
      for (int nu = mu; nu < d; ++nu) {
        Real g = 0;
        complex_type q(0);
        for (int m = 1; m < n; ++m) {
          const complex_type z = Kokkos::conj(proj(t, m, mu)) * proj(t, m, nu);
          const Real inv = regularized_inverse_gap(w(t, m) - e0, eta);
          if (kind == int(MetricKind::covariance))
            g += Real(2) * z.real();
          else if (kind == int(MetricKind::quantum))
            g += Real(2) * inv * z.real();
          if (tensor || fubini_study) q += (inv * inv) * z;
        }
        if (fubini_study) g = q.real();
        if (!math::isfinite(e0)) {  // a failed eigensolve: no geometry (also where N = 1 leaves the sums empty)
          g = e0;
          q = complex_type(e0, e0);
        }
        metric(t, mu, nu) = g;
        metric(t, nu, mu) = g;
        if (tensor) {
          fs(t, mu, nu) = q.real();
          fs(t, nu, mu) = q.real();
          berry(t, mu, nu) = Real(-2) * q.imag();
          berry(t, nu, mu) = Real(2) * q.imag();
        }
      }
  }
};

// Per point t: the metric's eigenvalues (descending) and the dimension estimate (-1 where the
// eigensolve of H failed).
template <class Real, class MemorySpace>
struct GeometrySpectrum {
  using tensor_type = Kokkos::View<Real***, Kokkos::LayoutRight, MemorySpace>;
  tensor_type metric, work;
  RealMatrix<Real, MemorySpace> eigenvalues;
  IntVector<MemorySpace> dimension, info;
  DimensionRule<Real> rule;

  KOKKOS_INLINE_FUNCTION void operator()(const int t) const {
    const int d = static_cast<int>(metric.extent(1));
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) work(t, i, j) = metric(t, i, j);
    const auto wt = Kokkos::subview(work, t, Kokkos::ALL, Kokkos::ALL);
    const auto et = Kokkos::subview(eigenvalues, t, Kokkos::ALL);
    const bool converged = linalg::symmetric_eigenvalues_descending(wt, et) <= linalg::symmetric_eigenvalues_max_sweeps;
    dimension(t) = info(t) == 0 && converged ? rule(&eigenvalues(t, 0), d) : -1;
  }
};

}  // namespace detail

// What QuantumGeometry::compute needs, known before anything is allocated (QuantumGeometry::needs).
struct GeometryNeeds {
  GeometryKernel kernel = GeometryKernel::automatic;  // the kernel compute() runs
  std::size_t scratch_bytes = 0;  // team scratch per team of that kernel's launch (0: the kernel takes none)
  std::size_t scratch_limit = 0;  // the most the execution space offers per team (TeamPolicy::scratch_size_max)
  double memory_bytes = 0;        // the buffers, and on host spaces every thread's share of the team scratch
  bool scratch_fits() const { return scratch_bytes <= scratch_limit; }
};

template <class Real, class ExecSpace>
class QuantumGeometry {
 public:
  using memory_space = typename ExecSpace::memory_space;
  using tensor_type = Kokkos::View<Real***, Kokkos::LayoutRight, memory_space>;  // T x D x D

  QuantumGeometry() = default;
  // geometric_tensor: allocate the storage of fubini_study() and berry_curvature() (needed only for
  // GeometrySettings::geometric_tensor; the metric of every MetricKind needs none).
  QuantumGeometry(int d, int n, int max_batch, bool geometric_tensor)
      : d_(d),
        n_(n),
        max_batch_(max_batch),
        info_("qgml::QuantumGeometry::info", max_batch),
        xbar_("qgml::QuantumGeometry::xbar", max_batch, d),
        energy_("qgml::QuantumGeometry::energy", max_batch),
        sigma2_("qgml::QuantumGeometry::sigma2", max_batch),
        metric_("qgml::QuantumGeometry::metric", max_batch, d, d),
        eigenvalues_("qgml::QuantumGeometry::eigenvalues", max_batch, d),
        dimension_("qgml::QuantumGeometry::dimension", max_batch),
        fubini_study_("qgml::QuantumGeometry::fubini_study", geometric_tensor ? max_batch : 0, d, d),
        berry_("qgml::QuantumGeometry::berry_curvature", geometric_tensor ? max_batch : 0, d, d) {
    QGML_REQUIRE(max_batch >= 1 && d >= 1 && n >= 1, "qgml::QuantumGeometry: need D, N, max_batch >= 1");
  }
  // With the tensor storage where `settings` asks for the geometric tensor.
  QuantumGeometry(int d, int n, int max_batch, const GeometrySettings& settings)
      : QuantumGeometry(d, n, max_batch, settings.geometric_tensor) {}

  int max_batch() const { return max_batch_; }

  // What compute() on chunks of max_batch points at D = d, N = n needs, before anything is allocated (the
  // pre-flight check of qgml train): the team scratch per team of the kernel `settings` resolves to (the
  // packed kernel's pack of W points, each with its D x D metric, 4 D N resolvent terms and the ground
  // state's arrays; the team kernel's point, 8 D N and the ground state's), which the launch refuses
  // when it exceeds scratch_limit; and the bytes of the buffers: those of the constructor (the T x D x D
  // metric), the spectrum's copy of the metrics, the separate path's T x N x N eigenproblems, and on
  // host spaces the team scratch of every thread.
  static GeometryNeeds needs(int d, int n, int max_batch, const GeometrySettings& settings,
                             const EighOptions& eigh = {}) {
    using policy_type = Kokkos::TeamPolicy<ExecSpace>;
    GeometryNeeds out;
    out.kernel = resolve_geometry_kernel<ExecSpace>(settings.kernel, n,
                                                    !eigh.warm_start && eigh.variant == EighVariant::automatic);
    out.scratch_limit =
        std::max(std::size_t(policy_type::scratch_size_max(0)), std::size_t(policy_type::scratch_size_max(1)));
    const std::size_t c = std::size_t(std::max(1, max_batch)), dd = std::size_t(d), nn = std::size_t(n);
    const auto reals = [](std::size_t count) { return double(view_allocation_bytes(count, sizeof(Real))); };
    const auto ints = [](std::size_t count) { return double(view_allocation_bytes(count, sizeof(int))); };
    const auto complexes = [](std::size_t count) {
      return double(view_allocation_bytes(count, sizeof(complex_t<Real>)));
    };
    // info, xbar, energy, sigma2, metric, eigenvalues, dimension; the tensor storage where asked for.
    double bytes = ints(c) + reals(c * dd) + 2 * reals(c) + reals(c * dd * dd) + reals(c * dd) + ints(c);
    if (settings.geometric_tensor) bytes += 2 * reals(c * dd * dd);
    if (out.kernel == GeometryKernel::packed) {
      if constexpr (is_host_space_v<ExecSpace>) {  // resolved on host spaces only
        using functor_type = detail::PackedGroundStateGeometry<Real, ExecSpace, RealMatrix<Real, memory_space>>;
        using scratch_type = decltype(functor_type::scratch);
        out.scratch_bytes = scratch_type{detail::packed_geometry_scratch_reals(n, d, functor_type::W)}.bytes();
      }
    } else {
      bytes += reals(c * dd * dd);  // the spectrum kernel's copy of the metrics
      if (out.kernel == GeometryKernel::team)
        out.scratch_bytes =
            plan_team_launch<Real, ExecSpace>(settings.team_shape, int(c), n,
                                              detail::ground_state_geometry_scratch_reals(n, d), "team geometry")
                .bytes;
      else  // H, V, w, W of the separate path
        bytes += 2 * complexes(c * nn * nn) + reals(c * nn) + complexes(c * nn * dd);
    }
    if constexpr (is_host_space_v<ExecSpace>) bytes += double(ExecSpace().concurrency()) * double(out.scratch_bytes);
    out.memory_bytes = bytes;
    return out;
  }

  // Geometry of the points (count = points.extent(0) <= max_batch); asynchronous on exec.
  // Out of the class (below), so that its explicit instances (end of this file) are what programs link.
  template <class PointsView>
  void compute(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config, const PointsView& points,
               const GeometrySettings& settings, const EighOptions& eigh = {});

  // Per-point results of the last compute(); the first `count` rows are valid.
  const RealMatrix<Real, memory_space>& xbar() const { return xbar_; }                // T x D: <psi_0|A_k|psi_0>
  const RealVector<Real, memory_space>& energy() const { return energy_; }            // E_0
  const RealVector<Real, memory_space>& sigma2() const { return sigma2_; }            // sigma^2
  const tensor_type& metric() const { return metric_; }                               // the metric of settings.metric
  const RealMatrix<Real, memory_space>& eigenvalues() const { return eigenvalues_; }  // descending
  const IntVector<memory_space>& dimension() const { return dimension_; }
  const tensor_type& fubini_study() const { return fubini_study_; }
  const tensor_type& berry_curvature() const { return berry_; }
  const IntVector<memory_space>& eigh_info() const { return info_; }

  // The implementations of compute() (GeometryKernel); public for nvcc (device lambdas).
  template <class PointsView>
  void compute_packed(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                      const PointsView& points, const GeometrySettings& settings, int count, bool tensor) {
    using policy_type = Kokkos::TeamPolicy<ExecSpace>;
    using functor_type = detail::PackedGroundStateGeometry<Real, ExecSpace, PointsView>;
    constexpr int width = functor_type::W;
    functor_type f;
    bind_ground_state_geometry(f, config, points, settings, tensor);
    f.count = count;
    f.eta_rel = degeneracy_eta<Real>(settings);
    f.eigenvalues = eigenvalues_;
    f.dimension = dimension_;
    f.rule = DimensionRule<Real>::from(settings.estimator);
    f.scratch.reals = detail::packed_geometry_scratch_reals(n_, d_, width);
    const std::size_t bytes = f.scratch.bytes();
    const int packs = (count + width - 1) / width;
    f.level = scratch_level(policy_type(exec, packs, 1), bytes, n_, "packed geometry");
    ScopedRegion region("qgml::metric");
    Kokkos::parallel_for("qgml::QuantumGeometry::packed",
                         policy_type(exec, packs, 1).set_scratch_size(f.level, Kokkos::PerTeam(bytes)), f);
  }

  template <class PointsView>
  void compute_team(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config, const PointsView& points,
                    const GeometrySettings& settings, int count, bool tensor) {
    using functor_type = detail::GroundStateGeometry<Real, ExecSpace, PointsView>;
    functor_type f;
    bind_ground_state_geometry(f, config, points, settings, tensor);
    f.eta_rel = degeneracy_eta<Real>(settings);
    f.count = count;
    const TeamLaunch<ExecSpace> launch = resolve_team_shape<Real>(
        exec, f, settings.team_shape, count, n_, detail::ground_state_geometry_scratch_reals(n_, d_), "team geometry");
    f.lanes = launch.lanes_per_problem();
    f.stride = launch.stride;
    f.level = launch.level;
    ScopedRegion region("qgml::metric");
    launch.parallel_for("qgml::QuantumGeometry::team", exec, f);
  }
  template <class PointsView>
  void compute_separate(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                        const PointsView& points, const GeometrySettings& settings, const EighOptions& eigh, int count,
                        bool tensor) {
    if (h_.extent(0) == 0) {
      h_ = MatrixStack<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::QuantumGeometry::H"),
                                           max_batch_, n_, n_);
      v_ = MatrixStack<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::QuantumGeometry::V"),
                                           max_batch_, n_, n_);
      w_ = RealMatrix<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::QuantumGeometry::w"),
                                          max_batch_, n_);
      proj_ = MatrixStack<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::QuantumGeometry::W"),
                                              max_batch_, n_, d_);
    }
    const auto range = Kokkos::make_pair(0, count);
    const auto h = Kokkos::subview(h_, range, Kokkos::ALL, Kokkos::ALL);
    build_hamiltonians(exec, config, points, h);
    {
      ScopedRegion region("qgml::eigensolve");
      batched_eigh(exec, h, Kokkos::subview(w_, range, Kokkos::ALL),
                   Kokkos::subview(v_, range, Kokkos::ALL, Kokkos::ALL), Kokkos::subview(info_, range), eigh);
    }
    ScopedRegion region("qgml::metric");
    detail::GeometryTensors<Real, memory_space, PointsView> tensors;
    tensors.a = config.matrices();
    tensors.v = v_;
    tensors.proj = proj_;
    tensors.w = w_;
    tensors.xbar = xbar_;
    tensors.energy = energy_;
    tensors.sigma2 = sigma2_;
    tensors.x = points;
    tensors.metric = metric_;
    tensors.fs = fubini_study_;
    tensors.berry = berry_;
    tensors.kind = int(settings.metric);
    tensors.tensor = tensor;
    tensors.eta_rel = degeneracy_eta<Real>(settings);
    Kokkos::parallel_for("qgml::QuantumGeometry::tensors", Kokkos::RangePolicy<ExecSpace>(exec, 0, count), tensors);
  }

 private:
  // The inputs and outputs the two ground-state kernels (GroundStateGeometry, PackedGroundStateGeometry)
  // share, by name.
  template <class Functor, class PointsView>
  void bind_ground_state_geometry(Functor& f, const MatrixConfiguration<Real, ExecSpace>& config,
                                  const PointsView& points, const GeometrySettings& settings, bool tensor) const {
    f.a = config.matrices();
    f.sq = config.square_sum();
    f.x = points;
    f.xbar = xbar_;
    f.energy = energy_;
    f.sigma2 = sigma2_;
    f.info = info_;
    f.metric = metric_;
    f.fs = fubini_study_;
    f.berry = berry_;
    f.kind = int(settings.metric);
    f.tensor = tensor;
  }

  int d_ = 0, n_ = 0, max_batch_ = 0;
  MatrixStack<Real, memory_space> h_, v_;
  RealMatrix<Real, memory_space> w_;
  IntVector<memory_space> info_;
  MatrixStack<Real, memory_space> proj_;
  RealMatrix<Real, memory_space> xbar_;
  RealVector<Real, memory_space> energy_, sigma2_;
  tensor_type metric_, work_;
  RealMatrix<Real, memory_space> eigenvalues_;
  IntVector<memory_space> dimension_;
  tensor_type fubini_study_, berry_;
};

template <class Real, class ExecSpace>
template <class PointsView>
void QuantumGeometry<Real, ExecSpace>::compute(const ExecSpace& exec,
                                               const MatrixConfiguration<Real, ExecSpace>& config,
                                               const PointsView& points, const GeometrySettings& settings,
                                               const EighOptions& eigh) {
  const int count = static_cast<int>(points.extent(0));
  QGML_REQUIRE(count <= max_batch_, "qgml::QuantumGeometry::compute: " + std::to_string(count) +
                                        " points exceed max_batch = " + std::to_string(max_batch_));
  QGML_REQUIRE(config.dimension() == d_ && config.matrix_size() == n_ && int(points.extent(1)) == d_,
               "qgml::QuantumGeometry::compute: the configuration or the points do not match D = " +
                   std::to_string(d_) + ", N = " + std::to_string(n_));
  QGML_REQUIRE(!settings.geometric_tensor || fubini_study_.extent(0) > 0,
               "qgml::QuantumGeometry: construct with geometric_tensor = true for fubini_study() and "
               "berry_curvature()");
  if (count == 0) return;
  const bool tensor =
      fubini_study_.extent(0) > 0 && (settings.geometric_tensor || settings.metric == MetricKind::fubini_study);
  // The packed and team kernels find the ground state themselves; a warm start or a chosen eigensolver
  // variant asks for the separate path, which runs batched_eigh.
  const GeometryKernel kernel = resolve_geometry_kernel<ExecSpace>(
      settings.kernel, n_, !eigh.warm_start && eigh.variant == EighVariant::automatic);
  if (kernel == GeometryKernel::packed) {
    if constexpr (is_host_space_v<ExecSpace>) compute_packed(exec, config, points, settings, count, tensor);
    return;  // the packed kernel also gives the metric's eigenvalues and the estimate
  }
  if (kernel == GeometryKernel::team)
    compute_team(exec, config, points, settings, count, tensor);
  else
    compute_separate(exec, config, points, settings, eigh, count, tensor);
  // The spectrum kernel's copy of the metrics, allocated on its first use (the packed path needs none).
  if (work_.extent(0) == 0)
    work_ = tensor_type(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "qgml::QuantumGeometry::work"),
                        max_batch_, d_, d_);
  detail::GeometrySpectrum<Real, memory_space> spectrum;
  spectrum.metric = metric_;
  spectrum.work = work_;
  spectrum.eigenvalues = eigenvalues_;
  spectrum.dimension = dimension_;
  spectrum.info = info_;
  spectrum.rule = DimensionRule<Real>::from(settings.estimator);
  Kokkos::parallel_for("qgml::QuantumGeometry::spectrum", Kokkos::RangePolicy<ExecSpace>(exec, 0, count), spectrum);
}

// Explicit instances (common/explicit_instances.hpp): the points in the space's memory and their rows,
// and the rows of the caller's host array; defined in src/geometry/quantum_geometry_instances_{double,float}.cpp.
#define QGML_QUANTUM_GEOMETRY_POINTS(E, Real, Space, Points)                                        \
  E template void QuantumGeometry<Real, Space>::compute<instances::Points<Real, Space>>(            \
      const Space&, const MatrixConfiguration<Real, Space>&, const instances::Points<Real, Space>&, \
      const GeometrySettings&, const EighOptions&);
#define QGML_QUANTUM_GEOMETRY_INSTANCE(E, Real, Space, H) \
  QGML_QUANTUM_GEOMETRY_POINTS(E, Real, Space, Points)    \
  QGML_QUANTUM_GEOMETRY_POINTS(E, Real, Space, PointRows) \
  H(QGML_QUANTUM_GEOMETRY_POINTS(E, Real, Space, HostArrayRows))
QGML_FOR_EACH_INSTANCE(QGML_QUANTUM_GEOMETRY_INSTANCE, extern)

}  // namespace qgml
