// The ground-state energy and its force for a batch of points: the potential of the samplers (sample/).
//   E_0(x) = the smallest eigenvalue of H(x) = 1/2 sum_k (A_k - x_k)^2 (docs/math.md 2.1),
//   grad_x E_0 = <psi_0| dH/dx |psi_0> = x - xbar(x)   (Hellmann-Feynman, docs/math.md 10.1: dH/dx_k = x_k - A_k),
// so one ground state per point gives both; 2 E_0 = |x - xbar|^2 + sigma^2 (docs/math.md 2.3).
// Two kernels with the same formulas:
//  - packed (host spaces, 2 <= N <= 256): one thread per pack of W points, lanes innermost, the ground
//    state of ground_state/ground_state_packed.hpp (the whole spectrum at N = 2; from N = 3 the ground-state
//    path with E_0 alone, by Laguerre's iteration on T, ground_state/tridiagonal_lowest_eigenvalue.hpp: faster
//    than the whole spectrum at N = 4, no faster at N = 2, perf/NOTES.md "Sampling (issue: sampling)");
//  - team (every backend; the GPU kernel): one team per point, ground_state/ground_state_team.hpp, E_0 alone as
//    well.
// The samplers need neither E_1 nor the exact E_max (a bound serves as the spectral scale of the inverse
// iteration), and xbar is formed from the Hermitian half of A_k (packed_expectations).
// A point whose eigensolve fails (non-finite H, no convergence) gets E_0 = NaN and xbar = NaN.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

#include "qgml/common/error.hpp"
#include "qgml/common/explicit_instances.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/line_aligned_scratch.hpp"
#include "qgml/common/types.hpp"
#include "qgml/ground_state/ground_state_packed.hpp"
#include "qgml/ground_state/ground_state_team.hpp"
#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/linalg/hermitian_eigensolver_packed.hpp"
#include "qgml/linalg/loops.hpp"
#include "qgml/linalg/team_shape.hpp"
#include "qgml/model/matrix_configuration.hpp"
#include "qgml/plan/kernel_rules.hpp"

namespace qgml {

// The kernels (EnergyKernel, plan/kernel_kinds.hpp): packed on host spaces for 2 <= N <= 256, team
// elsewhere (plan::energy_kernel).

namespace detail {

// Reals of one pack's scratch: packed_ground_state's arrays (PackedGroundStateScratch).
KOKKOS_INLINE_FUNCTION constexpr std::size_t packed_energy_scratch_reals(int n, int d, int width) {
  return packed_ground_state_scratch_reals(n, d, width);
}

// Reals of one team's scratch: team_ground_state's head (H, tau, p, T, z_0), the inverse iteration's
// workspace (2 N), psi (2 N), x (D), team_ground_state's shared scalars.
KOKKOS_INLINE_FUNCTION constexpr std::size_t team_energy_scratch_reals(int n, int d) {
  return team_ground_state_head_reals(n) + 4 * std::size_t(n) + std::size_t(d) + team_ground_state_shared;
}

// xbar_k = <psi|A_k|psi> for the W lanes (psi at j * W + q), from the lower triangle of the Hermitian A_k:
//   xbar_k = sum_i A_k(i, i) |psi_i|^2 + 2 Re sum_i conj(psi_i) sum_{j < i} A_k(i, j) psi_j,
// half the multiply-adds of y_k = A_k psi (the training kernels need y_k; the energy does not).
// sink(k, xb) receives the W values xbar_k of the lanes.
template <int W, class Real, class AView, class Sink>
KOKKOS_INLINE_FUNCTION void packed_expectations(const AView& a, const Real* psr, const Real* psi, const Sink& sink) {
  const int d = static_cast<int>(a.extent(0));
  const int n = static_cast<int>(a.extent(1));
  for (int k = 0; k < d; ++k) {
    Real diag[W], off[W];
    QGML_LANES(q, W) diag[q] = off[q] = Real(0);
    for (int i = 0; i < n; ++i) {
      Real tr[W], ti[W];  // sum_{j < i} A_k(i, j) psi_j
      QGML_LANES(q, W) tr[q] = ti[q] = Real(0);
      for (int j = 0; j < i; ++j) {
        const Real a_r = a(k, i, j).real(), a_i = a(k, i, j).imag();
        const Real* pr = psr + j * W;
        const Real* pi = psi + j * W;
        QGML_LANES(q, W) {
          tr[q] += a_r * pr[q] - a_i * pi[q];
          ti[q] += a_r * pi[q] + a_i * pr[q];
        }
      }
      const Real a_ii = a(k, i, i).real();
      const Real* pr = psr + i * W;
      const Real* pi = psi + i * W;
      QGML_LANES(q, W) {
        diag[q] += a_ii * (pr[q] * pr[q] + pi[q] * pi[q]);
        off[q] += pr[q] * tr[q] + pi[q] * ti[q];
      }
    }
    Real xb[W];
    QGML_LANES(q, W) xb[q] = diag[q] + Real(2) * off[q];
    sink(k, static_cast<const Real*>(xb));
  }
}

template <class Real, class ExecSpace, class PointsView, class EnergyView, class XbarView>
struct TeamGroundStateEnergy {
  using complex_type = complex_t<Real>;
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;

  MatrixStack<Real, typename ExecSpace::memory_space> a;
  Matrix<Real, typename ExecSpace::memory_space> sq;
  PointsView x;
  EnergyView energy;
  XbarView xbar;
  int count = 0, level = 0, lanes = 0;  // lanes, stride, level: the TeamLaunch's (for_team_problems)
  std::size_t stride = 0;

  template <class Mapping>
  KOKKOS_INLINE_FUNCTION void operator()(Mapping, const member_type& member) const {
    for_team_problems<Real>(Mapping{}, member, lanes, stride, level, count,
                            [&](const auto& loops, const int t, Real* base) { solve(loops, t, base); });
  }

  template <class Loops>
  KOKKOS_INLINE_FUNCTION void solve(const Loops& loops, const int t, Real* const base) const {
    const int d = static_cast<int>(a.extent(0));
    const int n = static_cast<int>(a.extent(1));
    const TeamGroundStateScratch<Real, typename ExecSpace::scratch_memory_space> g(base, n);
    Real* const w0 = g.rest;
    Real* const w1 = w0 + n;
    Real* const psr = w1 + n;
    Real* const psi = psr + n;
    Real* const xs = psi + n;
    Real* const shared = xs + d;
    // The inverse iteration's factors (no resolvent solve follows).
    const TeamGroundState<Real> gs = team_ground_state<Real>(loops, a, sq, x, t, g.h, g.tau, g.p, g.td, g.te, g.z0, w0,
                                                             w1, xs, shared, psr, psi, Real(0), true);
    const Real nan = math::sqrt(Real(-1));
    // xbar_k = Re <psi|A_k psi>, one coordinate per thread.
    loops.for_each(0, d, [&](const int k) {
      Real xb = 0;
      for (int i = 0; i < n; ++i) {
        Real yr = 0, yi = 0;
        for (int j = 0; j < n; ++j) {
          const complex_type akij = a(k, i, j);
          yr += akij.real() * psr[j] - akij.imag() * psi[j];
          yi += akij.real() * psi[j] + akij.imag() * psr[j];
        }
        xb += psr[i] * yr + psi[i] * yi;
      }
      xbar(t, k) = gs.code ? nan : xb;
    });
    loops.single([&]() { energy(t) = gs.e0; });
  }
};

// E_0 and xbar_k = <psi_0|A_k|psi_0> of the W points of one pack (one team of one thread).
template <class Real, class ExecSpace, class PointsView, class EnergyView, class XbarView>
struct PackedGroundStateEnergy {
  static constexpr int width = linalg::packed_eigh_width<Real>;
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using scratch_view = Kokkos::View<Real*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  LineAlignedScratch<scratch_view> scratch;
  int level = 0, count = 0, n = 0, d = 0;
  MatrixStack<Real, typename ExecSpace::memory_space> a;
  Matrix<Real, typename ExecSpace::memory_space> sq;
  PointsView x;
  PackedGroundStateMethod method = PackedGroundStateMethod::eigendecomposition;
  XbarView xb;
  EnergyView e;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const detail::PackedGroundStateScratch<width, Real> g(n, d, scratch.data(member, level));
    const int t0 = member.league_rank() * width;
    const int lanes = count - t0 < width ? count - t0 : width;
    int code[width];
    Real e0[width], emax[width], degenerate[width];
    detail::packed_ground_state<width>(a, sq, x, t0, lanes, method, g.p, g.xk, g.td, g.te, g.z0, g.fd, g.fl, g.psr,
                                       g.psi, Real(0), code, e0, emax, degenerate);
    const Real nan = math::sqrt(Real(-1));
    detail::packed_expectations<width>(a, g.psr, g.psi, [&](const int k, const Real* v) {
      for (int q = 0; q < lanes; ++q) xb(t0 + q, k) = code[q] ? nan : v[q];
    });
    for (int q = 0; q < lanes; ++q) e(t0 + q) = e0[q];
  }
};

}  // namespace detail

// E_0 and xbar of up to max_points points at a time; no allocation after construction.
template <class Real, class ExecSpace>
class GroundStateEnergy {
 public:
  // shape: how the team kernel lays points on teams (linalg/team_shape.hpp).
  GroundStateEnergy(int d, int n, EnergyKernel kernel = EnergyKernel::automatic, const TeamShape& shape = {})
      : d_(d), n_(n), kernel_(resolve_energy_kernel<ExecSpace>(kernel, n)), team_shape_(shape) {
    QGML_REQUIRE(d >= 1 && n >= 1, "qgml::GroundStateEnergy: need D >= 1 and N >= 1");
  }

  EnergyKernel kernel() const { return kernel_; }

  // energy(t) = E_0(x_t), xbar(t, k) = xbar_k(x_t) for t < points.extent(0). Asynchronous on exec.
  // Defined below the class (explicit instances: common/explicit_instances.hpp).
  template <class PointsView, class EnergyView, class XbarView>
  void compute(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config, const PointsView& points,
               const EnergyView& energy, const XbarView& xbar) const;

  // The two kernels.
  template <class PointsView, class EnergyView, class XbarView>
  void compute_team(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config, const PointsView& points,
                    const EnergyView& energy, const XbarView& xbar) const {
    using functor_type = detail::TeamGroundStateEnergy<Real, ExecSpace, PointsView, EnergyView, XbarView>;
    const int count = static_cast<int>(points.extent(0));
    functor_type f;
    f.a = config.matrices();
    f.sq = config.square_sum();
    f.x = points;
    f.energy = energy;
    f.xbar = xbar;
    f.count = count;
    const TeamLaunch<ExecSpace> launch = resolve_team_shape<Real>(
        exec, f, team_shape_, count, n_, detail::team_energy_scratch_reals(n_, d_), "team energy");
    f.lanes = launch.lanes_per_problem();
    f.stride = launch.stride;
    f.level = launch.level;
    launch.parallel_for("qgml::GroundStateEnergy::team", exec, f);
  }

  template <class PointsView, class EnergyView, class XbarView>
  void compute_packed(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                      const PointsView& points, const EnergyView& energy, const XbarView& xbar) const {
    constexpr int width = linalg::packed_eigh_width<Real>;
    using policy_type = Kokkos::TeamPolicy<ExecSpace>;
    using functor_type = detail::PackedGroundStateEnergy<Real, ExecSpace, PointsView, EnergyView, XbarView>;
    using scratch_view = typename functor_type::scratch_view;
    const int count = static_cast<int>(points.extent(0));
    const int d = d_, n = n_;
    const int packs = (count + width - 1) / width;
    const LineAlignedScratch<scratch_view> scratch{detail::packed_energy_scratch_reals(n, d, width)};
    const std::size_t bytes = scratch.bytes();
    const int level = scratch_level(policy_type(exec, packs, 1), bytes, n, "packed energy");
    const detail::PackedGroundStateMethod method = plan::packed_ground_state_method(n);
    const auto a = config.matrices();
    const auto sq = config.square_sum();
    const auto x = points;
    const auto e = energy;
    const auto xb = xbar;
    Kokkos::parallel_for("qgml::GroundStateEnergy::packed",
                         policy_type(exec, packs, 1).set_scratch_size(level, Kokkos::PerTeam(bytes)),
                         functor_type{scratch, level, count, n, d, a, sq, x, method, xb, e});
  }

 private:
  int d_ = 0, n_ = 0;
  EnergyKernel kernel_ = EnergyKernel::automatic;
  TeamShape team_shape_;
};

template <class Real, class ExecSpace>
template <class PointsView, class EnergyView, class XbarView>
void GroundStateEnergy<Real, ExecSpace>::compute(const ExecSpace& exec,
                                                 const MatrixConfiguration<Real, ExecSpace>& config,
                                                 const PointsView& points, const EnergyView& energy,
                                                 const XbarView& xbar) const {
  const int count = static_cast<int>(points.extent(0));
  QGML_REQUIRE(config.dimension() == d_ && config.matrix_size() == n_,
               "qgml::GroundStateEnergy: the configuration's D, N differ from the engine's");
  QGML_REQUIRE(int(points.extent(1)) == d_ && int(energy.extent(0)) >= count && int(xbar.extent(0)) >= count &&
                   int(xbar.extent(1)) == d_,
               "qgml::GroundStateEnergy: points, energy and xbar must hold count x D, count, count x D values");
  if (count == 0) return;
  if (kernel_ == EnergyKernel::packed)
    compute_packed(exec, config, points, energy, xbar);
  else
    compute_team(exec, config, points, energy, xbar);
}

// The instances the samplers use: chains x D points in the space's memory, their energies and xbar.
#define QGML_GROUND_STATE_ENERGY_INSTANCE(E, Real, Space, H)                                           \
  E template void GroundStateEnergy<Real, Space>::compute<                                             \
      instances::Points<Real, Space>, instances::Values<Real, Space>, instances::Points<Real, Space>>( \
      const Space&, const MatrixConfiguration<Real, Space>&, const instances::Points<Real, Space>&,    \
      const instances::Values<Real, Space>&, const instances::Points<Real, Space>&) const;
QGML_FOR_EACH_INSTANCE(QGML_GROUND_STATE_ENERGY_INSTANCE, extern)

}  // namespace qgml
