// Batched Hermitian eigendecomposition: for every t, H(t) v_j = w(t, j) v_j with v_j = row j of V(t)
// (v_j(i) = V(t, j, i)), eigenvalues ascending, eigenvectors orthonormal.
// See linalg/hermitian_eigensolver.hpp (serial and team variants) and
// linalg/hermitian_eigensolver_packed.hpp (packed variant, the default on host spaces for 2 <= N <= 64).
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <type_traits>

#include "qgml/common/error.hpp"
#include "qgml/common/explicit_instances.hpp"
#include "qgml/common/line_aligned_scratch.hpp"
#include "qgml/linalg/hermitian_eigensolver.hpp"
#include "qgml/linalg/hermitian_eigensolver_packed.hpp"
#include "qgml/linalg/hermitian_jacobi.hpp"
#include "qgml/linalg/loops.hpp"
#include "qgml/linalg/team_shape.hpp"
#include "qgml/plan/kernel_rules.hpp"

namespace qgml {

// Team variant (EighVariant, plan/kernel_kinds.hpp; the automatic choice is plan::eigh_variant): where the solve works.
// hermitian_eigh updates A in place and builds V; in the batch Views those are global memory on GPUs, where a block
// keeps little L1 cache beside the shared memory that Kokkos reserves for team policies (perf/NOTES.md "batched eigh at
// N = 16"). Staged in scratch, A is copied into the team's scratch (shared memory on GPUs) with its rows padded to an
// odd length (the lanes of a problem reading down a column then hit distinct banks), Q^T is formed over its reflectors
// (hermitian_eigh's QInA) and turned into V there, and V is copied out: N (N + 1) complex numbers of scratch per
// problem, fewer problems per block, each much faster. H is left as it was (the contract lets it be overwritten).
// (EighStaging, plan/kernel_kinds.hpp; the automatic choice is plan::eigh_staging.)

// Field order is kept so that EighOptions{variant, threads_per_matrix, warm_start} reads as before.
struct EighOptions {
  EighVariant variant = EighVariant::automatic;
  // Team variant: threads that share one matrix (the team size) in the team mapping; 0: see team_shape.
  int threads_per_matrix = 0;
  // Warm start: V holds on input an orthonormal basis close to the eigenvectors (e.g. those of the
  // previous training step), and the serial variant refines it by Jacobi sweeps
  // (linalg/hermitian_jacobi.hpp). The team variant solves cold and ignores the input V.
  bool warm_start = false;
  // Serial variant: matrices per team, one thread each (the team size); 0 chooses from the space
  // (1 on host spaces, 32 on devices). The packed variant always runs one thread per pack.
  int matrices_per_team = 0;
  // Team variant: how matrices are laid on teams (linalg/team_shape.hpp). Automatic: threads_per_matrix
  // threads per team where it is set, else one thread per matrix on host spaces and several matrices
  // per team (a fraction of a warp each) on devices.
  TeamShape team_shape = {};
  // Team variant: where the solve works (above).
  EighStaging staging = EighStaging::automatic;
};

// Leading dimension (complex elements) of a staged N x N matrix: N rounded up to an odd number. Lanes
// of one problem reading down a column then touch rows ld * 16 bytes apart (double), which an odd ld
// spreads over distinct 16-byte bank groups of a 128-byte shared-memory row (8 bytes: 16 groups).
KOKKOS_INLINE_FUNCTION constexpr int eigh_staged_ld(int n) { return n % 2 == 1 ? n : n + 1; }

// Reals of team scratch per problem of the team variant: hermitian_eigh's, rounded up to 16 bytes, then
// the staged matrix (2 N ld Reals).
template <class Real>
KOKKOS_INLINE_FUNCTION constexpr std::size_t eigh_team_scratch_reals(int n, EighStaging staging) {
  constexpr std::size_t align = 16 / sizeof(Real);
  const std::size_t base = (std::size_t(linalg::eigh_scratch_reals(n)) + align - 1) / align * align;
  return staging == EighStaging::scratch ? base + 2 * std::size_t(n) * std::size_t(eigh_staged_ld(n)) : base;
}

// Largest N the routines accept (the per-matrix scratch is O(N) and is checked against what the
// execution space offers; the matrices themselves live in the batch Views).
inline constexpr int eigh_max_size = 4096;

// Scratch level for `bytes` per team: 0 if it fits, else 1; a clear error if neither does.
template <class Policy>
int scratch_level(const Policy& policy, std::size_t bytes, int n, const char* variant) {
  if (bytes <= std::size_t(policy.scratch_size_max(0))) return 0;
  QGML_REQUIRE(bytes <= std::size_t(policy.scratch_size_max(1)),
               std::string("qgml::batched_eigh: the ") + variant + " variant needs " + std::to_string(bytes) +
                   " bytes of scratch per team for N = " + std::to_string(n) + ", more than this device offers");
  return 1;
}

namespace detail {

// Eigendecomposition of the W matrices of one pack, first = league rank * W (one team of one thread).
template <class ExecSpace, class HView, class WView, class VView, class InfoView, class SweepsView>
struct PackedEigh {
  using Real = typename WView::non_const_value_type;
  static constexpr int width = linalg::packed_eigh_width<Real>;
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using scratch_view = Kokkos::View<Real*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  HView h;
  WView w;
  VView v;
  InfoView info;
  int count = 0;
  LineAlignedScratch<scratch_view> scratch;
  int level = 0;
  bool record_sweeps = false;
  SweepsView sweeps;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const int first = member.league_rank() * width;
    linalg::hermitian_eigh_packed<width>(h, w, v, info, first, count, scratch.data(member, level));
    if (record_sweeps)
      for (int t = first; t < count && t < first + width; ++t) sweeps(t) = 0;
  }
};

// The packed variant: one team of one thread per pack of W matrices (host spaces only).
template <class ExecSpace, class HView, class WView, class VView, class InfoView, class SweepsView>
void batched_eigh_packed(const ExecSpace& exec, const HView& h, const WView& w, const VView& v, const InfoView& info,
                         const SweepsView& sweeps, bool record_sweeps) {
  static_assert(is_host_space_v<ExecSpace>, "qgml::batched_eigh: the packed variant runs on host spaces only");
  using Real = typename WView::non_const_value_type;
  constexpr int width = linalg::packed_eigh_width<Real>;
  using policy_type = Kokkos::TeamPolicy<ExecSpace>;
  using functor_type = PackedEigh<ExecSpace, HView, WView, VView, InfoView, SweepsView>;
  using scratch_view = typename functor_type::scratch_view;
  const int count = static_cast<int>(h.extent(0));
  const int n = static_cast<int>(h.extent(1));
  const int packs = (count + width - 1) / width;
  const LineAlignedScratch<scratch_view> scratch{std::size_t(linalg::packed_eigh_scratch_reals(n, width))};
  const std::size_t bytes = scratch.bytes();
  const int level = scratch_level(policy_type(exec, packs, 1), bytes, n, "packed");
  Kokkos::parallel_for("qgml::batched_eigh[packed]",
                       policy_type(exec, packs, 1).set_scratch_size(level, Kokkos::PerTeam(bytes)),
                       functor_type{h, w, v, info, count, scratch, level, record_sweeps, sweeps});
}

// The team variant: a group of threads per matrix in a TeamShape (for_team_problems). Staging: an
// EighStaging other than automatic, fixed at compile time so that each kernel holds one access path.
template <class Real, class ExecSpace, class HView, class WView, class VView, class InfoView, class SweepsView,
          EighStaging Staging>
struct TeamEigh {
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using complex_type = complex_t<Real>;
  using staged_view = Kokkos::View<complex_type**, Kokkos::LayoutStride, typename ExecSpace::scratch_memory_space,
                                   Kokkos::MemoryUnmanaged>;
  HView h;
  WView w;
  VView v;
  InfoView info;
  SweepsView sweeps;
  bool record_sweeps = false;
  int count = 0, level = 0, lanes = 0;
  std::size_t stride = 0;
  int n = 0;

  template <class Mapping>
  KOKKOS_INLINE_FUNCTION void operator()(Mapping, const member_type& member) const {
    for_team_problems<Real>(Mapping{}, member, lanes, stride, level, count,
                            [&](const auto& loops, const int t, Real* s) {
                              const auto a = Kokkos::subview(h, t, Kokkos::ALL, Kokkos::ALL);
                              const auto wt = Kokkos::subview(w, t, Kokkos::ALL);
                              const auto vt = Kokkos::subview(v, t, Kokkos::ALL, Kokkos::ALL);
                              const int code = solve(loops, a, wt, vt, s);
                              loops.single([&]() {
                                info(t) = code;
                                if (record_sweeps) sweeps(t) = 0;
                              });
                            });
  }

  template <class Loops, class AView, class WT, class VT>
  KOKKOS_INLINE_FUNCTION int solve(const Loops& loops, const AView& a, const WT& wt, const VT& vt, Real* s) const {
    if constexpr (Staging == EighStaging::none) {
      return linalg::hermitian_eigh(loops, a, wt, vt, s);
    } else {
      complex_type* const base =
          reinterpret_cast<complex_type*>(s + eigh_team_scratch_reals<Real>(n, EighStaging::none));
      const staged_view as(base, Kokkos::LayoutStride(n, eigh_staged_ld(n), n, 1));
      loops.for_each(0, n * n, [&](const int ij) { as(ij / n, ij % n) = a(ij / n, ij % n); });
      loops.barrier();
      const int code = linalg::hermitian_eigh<0, true>(loops, as, wt, as, s);
      loops.barrier();
      loops.for_each(0, n * n, [&](const int ij) { vt(ij / n, ij % n) = as(ij / n, ij % n); });
      return code;
    }
  }
};

template <EighStaging Staging, class Real, class ExecSpace, class HView, class WView, class VView, class InfoView,
          class SweepsView>
void batched_eigh_team(const ExecSpace& exec, const HView& h, const WView& w, const VView& v, const InfoView& info,
                       const SweepsView& sweeps, bool record_sweeps, const TeamShape& shape) {
  const int count = static_cast<int>(h.extent(0));
  const int n = static_cast<int>(h.extent(1));
  TeamEigh<Real, ExecSpace, HView, WView, VView, InfoView, SweepsView, Staging> f{
      h, w, v, info, sweeps, record_sweeps, count};
  f.n = n;
  const TeamLaunch<ExecSpace> launch = resolve_team_shape<Real>(
      exec, f, shape, count, n, eigh_team_scratch_reals<Real>(n, Staging), "batched_eigh team variant");
  f.lanes = launch.lanes_per_problem();
  f.stride = launch.stride;
  f.level = launch.level;
  launch.parallel_for("qgml::batched_eigh[team]", exec, f);
}

// Eigendecomposition of matrix t = league rank * team size + team rank, one thread per matrix: cold
// (hermitian_eigh, unrolled for N = 2, 3, 4, where unrolling pays, and not from N = 8 on: perf/NOTES.md,
// "Eigensolver (issue: batched Hermitian eigensolver)") or warm (Jacobi sweeps from the input V).
template <class Real, class ExecSpace, class HView, class WView, class VView, class InfoView, class SweepsView>
struct SerialEigh {
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using scratch_view =
      Kokkos::View<complex_t<Real>*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  int count = 0, level = 0, scratch_elements = 0;
  HView h;
  WView w;
  VView v;
  bool warm = false;
  InfoView info;
  bool record_sweeps = false;
  SweepsView sweeps;
  int n = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const int t = member.league_rank() * member.team_size() + member.team_rank();
    if (t >= count) return;
    scratch_view buf(member.thread_scratch(level), scratch_elements);
    const auto a = Kokkos::subview(h, t, Kokkos::ALL, Kokkos::ALL);
    const auto wt = Kokkos::subview(w, t, Kokkos::ALL);
    const auto vt = Kokkos::subview(v, t, Kokkos::ALL, Kokkos::ALL);
    Real* s = reinterpret_cast<Real*>(buf.data());
    const linalg::SerialLoops loops;
    if (warm) {
      int used = 0;
      info(t) = linalg::hermitian_eigh_warm(a, wt, vt, s, used);
      if (record_sweeps) sweeps(t) = used;
      return;
    }
    if (record_sweeps) sweeps(t) = 0;
    switch (n) {  // compile-time sizes where unrolling pays (see SerialEigh)
      case 2:
        info(t) = linalg::hermitian_eigh<2>(loops, a, wt, vt, s);
        break;
      case 3:
        info(t) = linalg::hermitian_eigh<3>(loops, a, wt, vt, s);
        break;
      case 4:
        info(t) = linalg::hermitian_eigh<4>(loops, a, wt, vt, s);
        break;
      default:
        info(t) = linalg::hermitian_eigh(loops, a, wt, vt, s);
    }
  }
};

// t-th term: 1 where info(t) is not eigh_success.
template <class InfoView>
struct CountEighFailures {
  using value_type = int;
  InfoView info;

  KOKKOS_INLINE_FUNCTION void operator()(const int t, int& f) const { f += info(t) != linalg::eigh_success ? 1 : 0; }
};

}  // namespace detail

// h: T x N x N Hermitian matrices (overwritten), w: T x N, v: T x N x N, info: T (EighInfo codes).
// Launches on exec and does not fence.
// sweeps (optional, T ints): Jacobi sweeps per point of a warm start (0 for cold solves).
template <class ExecSpace, class HView, class WView, class VView, class InfoView,
          class SweepsView = Kokkos::View<int*, typename ExecSpace::memory_space>>
void batched_eigh(const ExecSpace& exec, const HView& h, const WView& w, const VView& v, const InfoView& info,
                  const EighOptions& options = {}, const SweepsView& sweeps = SweepsView()) {
  using Real = typename WView::non_const_value_type;
  static_assert(std::is_same_v<typename HView::non_const_value_type, complex_t<Real>>,
                "batched_eigh: H must hold Kokkos::complex<Real> with Real the eigenvalue type");
  static_assert(HView::rank == 3 && VView::rank == 3 && WView::rank == 2 && InfoView::rank == 1,
                "batched_eigh: expected H (T x N x N), w (T x N), V (T x N x N), info (T)");
  const int count = static_cast<int>(h.extent(0));
  const int n = static_cast<int>(h.extent(1));
  QGML_REQUIRE(int(h.extent(2)) == n, "qgml::batched_eigh: matrices must be square");
  QGML_REQUIRE(n >= 1 && n <= eigh_max_size, "qgml::batched_eigh: N = " + std::to_string(n) +
                                                 " is outside the supported range [1, " +
                                                 std::to_string(eigh_max_size) + "]");
  QGML_REQUIRE(int(w.extent(0)) >= count && int(w.extent(1)) == n && int(v.extent(0)) >= count &&
                   int(v.extent(1)) == n && int(v.extent(2)) == n && int(info.extent(0)) >= count,
               "qgml::batched_eigh: w must be T x N, V T x N x N and info T for H of " + std::to_string(count) + " x " +
                   std::to_string(n) + " x " + std::to_string(n));
  QGML_REQUIRE(v.stride(2) == 1 && h.stride(2) == 1,
               "qgml::batched_eigh: the rows of H and V must be contiguous (LayoutRight)");
  if (count == 0) return;
  using policy_type = Kokkos::TeamPolicy<ExecSpace>;
  // Scratch is carved from complex elements so that the complex arrays in it are aligned for
  // Kokkos::complex (16 bytes in double); it goes to level 1 (global memory on GPUs) when it does not
  // fit the fast level 0.
  using scratch_view =
      Kokkos::View<complex_t<Real>*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const bool warm = options.warm_start;
  const bool record_sweeps = sweeps.extent(0) >= std::size_t(count);
  const int scratch_elements = (linalg::eigh_scratch_reals(n) + (warm ? linalg::jacobi_scratch_reals(n) : 0) + 1) / 2;
  const std::size_t scratch_bytes = team_scratch_bytes<scratch_view>(scratch_elements);

  EighVariant variant = resolve_eigh_variant<ExecSpace>(options.variant, n);
  if (variant == EighVariant::packed && warm) variant = EighVariant::serial;  // warm start: serial Jacobi
  if constexpr (is_host_space_v<ExecSpace>) {
    if (variant == EighVariant::packed) {
      detail::batched_eigh_packed(exec, h, w, v, info, sweeps, record_sweeps);
      return;
    }
  }
  if (variant != EighVariant::team) {
    int ts = options.matrices_per_team > 0 ? options.matrices_per_team : (is_host_space_v<ExecSpace> ? 1 : 32);
    // The matrices of a team are independent, so the team size changes no result: a requested size
    // above what the kernel can launch with (registers, scratch: team_size_max, asked of a policy of
    // team size 1, since constructing one with too large a size aborts) is lowered to it.
    // On devices Kokkos sizes shared memory for whole warps (its block-size search starts at 32 threads):
    // a team of fewer threads whose per-thread scratch fits level 0 but 32 threads' does not would be
    // refused ("requested too large team size"; a GPU at N = 31 with one matrix per team), so the level
    // is chosen for the team size rounded up to a warp.
    bool force_level1 = false;
    for (;;) {
      const int block = is_host_space_v<ExecSpace> ? ts : (ts + 31) / 32 * 32;
      const int level =
          force_level1 ? 1 : scratch_level(policy_type(exec, 1, 1), std::size_t(block) * scratch_bytes, n, "serial");
      const detail::SerialEigh<Real, ExecSpace, HView, WView, VView, InfoView, SweepsView> kernel{
          count, level, scratch_elements, h, w, v, warm, info, record_sweeps, sweeps, n};
      const int max_ts = policy_type(exec, 1, 1)
                             .set_scratch_size(level, Kokkos::PerThread(scratch_bytes))
                             .team_size_max(kernel, Kokkos::ParallelForTag());
      if (max_ts < 1 && level == 0) {
        force_level1 = true;
        continue;
      }
      QGML_REQUIRE(max_ts >= 1, "qgml::batched_eigh: the serial variant cannot launch at N = " + std::to_string(n) +
                                    " with " + std::to_string(scratch_bytes) +
                                    " bytes of scratch per matrix (EighOptions::matrices_per_team = " +
                                    std::to_string(options.matrices_per_team) + ")");
      if (ts > max_ts) {
        ts = max_ts;
        continue;
      }
      Kokkos::parallel_for(
          "qgml::batched_eigh[serial]",
          policy_type(exec, (count + ts - 1) / ts, ts).set_scratch_size(level, Kokkos::PerThread(scratch_bytes)),
          kernel);
      break;
    }
  } else {
    TeamShape shape = options.team_shape;
    if (shape.mapping == TeamShape::Mapping::automatic && options.threads_per_matrix > 0)
      shape = TeamShape::with_threads(options.threads_per_matrix);
    if (resolve_eigh_staging<ExecSpace>(options.staging, n) == EighStaging::scratch)
      detail::batched_eigh_team<EighStaging::scratch, Real>(exec, h, w, v, info, sweeps, record_sweeps, shape);
    else
      detail::batched_eigh_team<EighStaging::none, Real>(exec, h, w, v, info, sweeps, record_sweeps, shape);
  }
}

// Number of points whose info code is not eigh_success (a reduction; the result is on the host).
template <class ExecSpace, class InfoView>
int count_eigh_failures(const ExecSpace& exec, const InfoView& info) {
  int failures = 0;
  Kokkos::parallel_reduce("qgml::count_eigh_failures", Kokkos::RangePolicy<ExecSpace>(exec, 0, info.extent(0)),
                          detail::CountEighFailures<InfoView>{info}, failures);
  return failures;
}

// Explicit instances (common/explicit_instances.hpp): the leading rows of a batch's H, w, V and info, with
// or without the sweeps' rows; defined in src/linalg/batched_eigh_instances_{double,float}.cpp.
#define QGML_BATCHED_EIGH_SWEEPS(E, Real, Space, Sweeps)                                                     \
  E template void batched_eigh<Space, instances::MatrixRows<Real, Space>, instances::PointRows<Real, Space>, \
                               instances::MatrixRows<Real, Space>, instances::IntRows<Space>, Sweeps>(       \
      const Space&, const instances::MatrixRows<Real, Space>&, const instances::PointRows<Real, Space>&,     \
      const instances::MatrixRows<Real, Space>&, const instances::IntRows<Space>&, const EighOptions&, const Sweeps&);
#define QGML_BATCHED_EIGH_INSTANCE(E, Real, Space, H)              \
  QGML_BATCHED_EIGH_SWEEPS(E, Real, Space, instances::Ints<Space>) \
  QGML_BATCHED_EIGH_SWEEPS(E, Real, Space, instances::IntRows<Space>)
QGML_FOR_EACH_INSTANCE(QGML_BATCHED_EIGH_INSTANCE, extern)

}  // namespace qgml
