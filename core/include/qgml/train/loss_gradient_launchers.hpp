// The launches of LossGradient's team path (loss_gradient_team.hpp, in the TeamShape resolved for the
// batch) and of its fused host path (loss_gradient_packed.hpp: one thread per chunk of SIMD packs, in
// double or with the mixed-precision ground state, ground_state/ground_state_mixed.hpp).
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/line_aligned_scratch.hpp"
#include "qgml/linalg/team_shape.hpp"
#include "qgml/train/loss_gradient_packed.hpp"
#include "qgml/train/loss_gradient_team.hpp"
#include "qgml/train/loss_gradient_views.hpp"

namespace qgml::detail {

// Every kernel is a named functor, no KOKKOS_LAMBDA: docs/architecture.md "Host execution spaces in a
// CUDA build".

// The team path: a group of threads per point in the given TeamShape (loss_gradient_team.hpp), then
// the GEMM.
template <class Real, class ExecSpace, class PointsView>
void loss_gradient_team(const ExecSpace& exec, const LossGradientViews<Real, typename ExecSpace::memory_space>& buf,
                        const MatrixConfiguration<Real, ExecSpace>& config, const PointsView& x,
                        const LossSettings& settings, Real weight, int count, const TeamShape& shape,
                        const SupervisedInputs<Real, typename ExecSpace::memory_space>& sup) {
  using functor_type = TeamLossGradient<Real, ExecSpace, PointsView>;
  const int d = buf.d, n = buf.n;
  functor_type f;
  assign_point_inputs(f, buf, config, x, settings, weight, count, sup);
  f.sq = config.square_sum();
  const TeamLaunch<ExecSpace> launch =
      resolve_team_shape<Real>(exec, f, shape, count, n, team_gradient_scratch_reals(n, d), "team loss-gradient");
  f.lanes = launch.lanes_per_problem();
  f.stride = launch.stride;
  f.level = launch.level;
  {
    ScopedRegion region("qgml::team_loss_gradient");
    launch.parallel_for("qgml::LossGradient::team", exec, f);
  }
}

// The fused host path's kernel: one thread per chunk of packs of W lanes (loss_gradient_packed.hpp). The
// chunks are counted in narrow packs (linalg::packed_eigh_width<Real> points); a wide pack (W twice that)
// is two of them.
template <int W, class Real, class ExecSpace, class PointsView>
struct FusedChunksKernel {
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using memory_space = typename ExecSpace::memory_space;
  using scratch_view = Kokkos::View<Real*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  typename MatrixConfiguration<Real, ExecSpace>::matrices_type a;
  typename MatrixConfiguration<Real, ExecSpace>::matrix_type sq;
  PointsView x;
  LossGradientViews<Real, memory_space> buf;
  SupervisedInputs<Real, memory_space> sup;
  LineAlignedScratch<scratch_view> scratch;
  // The mixed-precision ground state's arrays (ground_state/ground_state_mixed.hpp), one row per token: above
  // Kokkos' 20 MiB of team scratch at N = 256 together with the pack's.
  Kokkos::View<double**, Kokkos::LayoutRight, memory_space> mixed_buffers;
  Kokkos::Experimental::UniqueToken<ExecSpace> token;
  Real weight = 0, lw = 0, eta_rel = 0, tol = 0;
  int per = 0, packs_total = 0, count = 0, level = 0;
  bool skip_degenerate = false, ground_state = false, mixed = false;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    constexpr int narrow = linalg::packed_eigh_width<Real>, group = W / narrow;
    const int c = member.league_rank();
    const int first_pack = c * per;
    const int packs = packs_total - first_pack < per ? packs_total - first_pack : per;
    const int id = mixed ? token.acquire() : 0;
    packed_loss_gradient_chunk<W>(a, sq, x, buf.xbar, buf.terms, buf.info, buf.partials, c, first_pack * narrow,
                                  (packs + group - 1) / group, count, weight, lw, eta_rel, tol, skip_degenerate,
                                  ground_state, mixed, sup, scratch.data(member, level),
                                  mixed ? &mixed_buffers(id, 0) : nullptr);
    if (mixed) token.release(id);
  }
};

// Rows and row length (a multiple of 8 doubles, 64 bytes) of the fused path's mixed-precision buffers.
template <class ExecSpace>
int mixed_buffer_rows(const ExecSpace& exec) {
  return int(Kokkos::Experimental::UniqueToken<ExecSpace>(exec).size());
}
inline std::size_t mixed_buffer_row(int n, int d) { return (mixed_ground_state_scratch_reals(n, d) + 7) / 8 * 8; }

template <int W, class Real, class ExecSpace, class PointsView>
void loss_gradient_fused_chunks_of(
    const ExecSpace& exec, const LossGradientViews<Real, typename ExecSpace::memory_space>& buf,
    const MatrixConfiguration<Real, ExecSpace>& config, const PointsView& x, const LossSettings& settings, Real weight,
    int count, bool ground_state, bool paired,
    const Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space>& mixed,
    const SupervisedInputs<Real, typename ExecSpace::memory_space>& sup) {
  constexpr int narrow = linalg::packed_eigh_width<Real>;
  using policy_type = Kokkos::TeamPolicy<ExecSpace>;
  using kernel_type = FusedChunksKernel<W, Real, ExecSpace, PointsView>;
  const int n = buf.n, blocks = packed_gradient_blocks(buf.d, buf.targets);
  kernel_type f;
  f.a = config.matrices();
  f.sq = config.square_sum();
  f.x = x;
  f.buf = buf;
  f.sup = sup;
  f.scratch = {packed_gradient_scratch_reals(n, buf.d, W, narrow)};
  assign_loss_settings(f, settings, weight);
  f.ground_state = ground_state;
  f.mixed = mixed.extent(0) > 0;
  f.mixed_buffers = mixed;
  if (f.mixed) f.token = Kokkos::Experimental::UniqueToken<ExecSpace>(exec);
  f.count = count;
  f.per = packed_gradient_chunk_packs<Real>(count, n, blocks, paired);
  f.packs_total = (count + narrow - 1) / narrow;
  const int chunks = packed_gradient_chunks<Real>(count, n, blocks, paired);
  const std::size_t bytes = f.scratch.bytes();
  f.level = scratch_level(policy_type(exec, chunks, 1), bytes, n, "fused loss-gradient");
  Kokkos::parallel_for("qgml::LossGradient::fused_chunks",
                       policy_type(exec, chunks, 1).set_scratch_size(f.level, Kokkos::PerTeam(bytes)), f);
}

// The fused path in packs of linalg::packed_eigh_width<Real> points, or of packed_wide_width<Real>
// (double only, never with the mixed precision, whose pairs of narrow packs share one float pack).
template <class Real, class ExecSpace, class PointsView>
void loss_gradient_fused_chunks(
    const ExecSpace& exec, const LossGradientViews<Real, typename ExecSpace::memory_space>& buf,
    const MatrixConfiguration<Real, ExecSpace>& config, const PointsView& x, const LossSettings& settings, Real weight,
    int count, bool ground_state, bool wide,
    const Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space>& mixed,
    const SupervisedInputs<Real, typename ExecSpace::memory_space>& sup) {
  const bool paired = wide || mixed.extent(0) > 0;
  if constexpr (std::is_same_v<Real, double>) {
    if (wide) {
      QGML_REQUIRE(mixed.extent(0) == 0, "qgml::LossGradient: wide packs and the mixed precision exclude each other");
      loss_gradient_fused_chunks_of<packed_wide_width<Real>>(exec, buf, config, x, settings, weight, count,
                                                             ground_state, paired, mixed, sup);
      return;
    }
  }
  loss_gradient_fused_chunks_of<linalg::packed_eigh_width<Real>>(exec, buf, config, x, settings, weight, count,
                                                                 ground_state, paired, mixed, sup);
}

}  // namespace qgml::detail
