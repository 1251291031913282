// How a batched kernel that gives each problem (a point, a matrix) a group of threads lays its problems
// on a Kokkos::TeamPolicy, and the launch that follows from it (policy, scratch level, scratch per
// problem). The algorithms are written once against linalg/loops.hpp; the shape picks the mapping:
//  - lanes: `per_team` problems per team, each on the `lanes` vector lanes of one thread of the team
//    (linalg::VectorLoops). On CUDA a fraction of a warp per problem: at N = 8 eight points share a warp
//    (4 lanes each) instead of one point per team of 32 or more threads, most of them idle in loops of
//    8 and in the one-thread parts, and the lanes synchronise with __syncwarp instead of a block barrier;
//    so the training epoch at N = 8 is faster on GPUs than with one point per team (perf/NOTES.md,
//    "Several points per team on GPUs: VectorLoops and TeamShape").
//  - team: one problem per team of `threads` threads (linalg::TeamLoops; one thread: linalg::SerialLoops,
//    the host default).
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <type_traits>

#include "qgml/common/error.hpp"
#include "qgml/common/line_aligned_scratch.hpp"
#include "qgml/common/types.hpp"
#include "qgml/linalg/loops.hpp"
#include "qgml/plan/kernel_rules.hpp"

namespace qgml {

struct TeamShape {
  enum class Mapping {
    automatic,  // host spaces: team with one thread; devices: lanes with the automatic sizes
    lanes,
    team
  };
  Mapping mapping = Mapping::automatic;
  int lanes = 0;     // lanes mapping: vector lanes per problem, a power of two <= 32 (0: automatic)
  int per_team = 0;  // lanes mapping: problems per team (0: automatic)
  int threads = 0;   // team mapping: threads per team (0: one on host spaces, Kokkos::AUTO on devices)

  static TeamShape with_lanes(int lanes, int per_team = 0) { return TeamShape{Mapping::lanes, lanes, per_team, 0}; }
  static TeamShape with_threads(int threads) { return TeamShape{Mapping::team, 0, 0, threads}; }
};

// Work tags of the two mappings: a kernel's functor takes either (for_team_problems), and each mapping
// is compiled as a kernel of its own, so that the lanes kernel's registers are those of VectorLoops alone
// (one kernel holding every mapping took 234 registers per thread at N = 8 on an H100, two blocks of 128
// threads per multiprocessor).
struct LanesMapping {};
struct TeamMapping {};

// Threads of one team the automatic lanes mapping aims at (lanes x problems per team).
inline constexpr int team_shape_block_threads = 128;

// The lanes mapping's kernels are compiled for blocks of at most team_shape_block_threads threads and
// team_shape_min_blocks blocks per multiprocessor: at most 65536 / (128 x 4) = 128 registers per thread.
// Unbounded, the team loss-gradient took 176 (N = 8, double, sm_90): two blocks per multiprocessor.
// QGML_LANES_MIN_BLOCKS overrides it at compile time (a tuning experiment: more blocks, fewer
// registers, more spills).
#ifndef QGML_LANES_MIN_BLOCKS
#define QGML_LANES_MIN_BLOCKS 4
#endif
inline constexpr int team_shape_min_blocks = QGML_LANES_MIN_BLOCKS;
template <class ExecSpace>
using lanes_policy_type =
    Kokkos::TeamPolicy<ExecSpace, LanesMapping, Kokkos::LaunchBounds<team_shape_block_threads, team_shape_min_blocks>>;

// The automatic lanes per problem of size N: the smallest power of two >= N / 2 (at least 2) up to
// N = 16, 32 (a whole warp) above: on a GPU in double the fastest of the lane counts tried (the team
// training epoch at N = 8: 4 lanes against 2 and 8; batched_eigh at N = 16: 8 against 16; at N = 32: 32
// against 16; perf/NOTES.md, "Several points per team on GPUs: VectorLoops and TeamShape").
// Below N = 32 the serial parts of a solve (the eigenvalues of T, the QL sweeps) weigh more, and more
// problems per warp run them side by side.
inline int team_shape_default_lanes(int n) {
  if (n > 16) return 32;
  int lanes = 2;
  while (2 * lanes < n) lanes *= 2;
  return lanes;
}

inline std::string to_string(const TeamShape& shape) {
  switch (shape.mapping) {
    case TeamShape::Mapping::lanes:
      return std::to_string(shape.per_team) + " per team x " + std::to_string(shape.lanes) + " lanes";
    case TeamShape::Mapping::team:
      return "one per team of " + (shape.threads > 0 ? std::to_string(shape.threads) : std::string("AUTO")) +
             " threads";
    default:
      return "automatic";
  }
}

// The automatic sizes of a lanes-mapping shape: lanes 0 -> team_shape_default_lanes(n); per_team 0 ->
// team_shape_block_threads / lanes, lowered until the team's scratch (bytes_for(problems)) fits level0
// bytes where one problem's does.
template <class BytesFor>
TeamShape complete_lanes_shape(TeamShape s, int n, const BytesFor& bytes_for, std::size_t level0) {
  if (s.lanes <= 0) s.lanes = team_shape_default_lanes(n);
  if (s.per_team <= 0) {
    s.per_team = team_shape_block_threads / s.lanes > 1 ? team_shape_block_threads / s.lanes : 1;
    if (bytes_for(std::size_t(1)) <= level0)
      while (s.per_team > 1 && bytes_for(std::size_t(s.per_team)) > level0) --s.per_team;
  }
  return s;
}

// A resolved shape and everything a launch needs. stride: Reals of scratch per problem (a multiple of 16
// bytes, so that every problem's complex arrays stay aligned, and even); bytes: team scratch per team; level: 0 (shared
// memory) where the team's scratch fits, else 1.
template <class ExecSpace>
struct TeamLaunch {
  TeamShape shape;
  std::size_t stride = 0;
  std::size_t bytes = 0;
  int level = 0;
  int teams = 0;

  bool lanes() const { return shape.mapping == TeamShape::Mapping::lanes; }
  // for_team_problems' lanes argument.
  int lanes_per_problem() const { return lanes() ? shape.lanes : 0; }
  // The policy of the mapping's work tag (lanes_policy_type for LanesMapping). The team mapping's teams
  // are scheduled dynamically: its problems are independent, and on host spaces a thread slowed by
  // another process then leaves its teams to the others (perf/NOTES.md, "The host team path on split
  // planes").
  template <class Tag>
  auto policy(const ExecSpace& exec) const {
    using policy_type = std::conditional_t<std::is_same_v<Tag, LanesMapping>, lanes_policy_type<ExecSpace>,
                                           Kokkos::TeamPolicy<ExecSpace, Tag, Kokkos::Schedule<Kokkos::Dynamic>>>;
    policy_type p = lanes() ? policy_type(exec, teams, shape.per_team, shape.lanes)
                            : (shape.threads > 0 ? policy_type(exec, teams, shape.threads)
                                                 : policy_type(exec, teams, Kokkos::AUTO));
    return p.set_scratch_size(level, Kokkos::PerTeam(bytes));
  }
  // Launches f (whose operator() takes LanesMapping or TeamMapping, then the member) on exec.
  template <class Functor>
  void parallel_for(const std::string& label, const ExecSpace& exec, const Functor& f) const {
    if (lanes())
      Kokkos::parallel_for(label, policy<LanesMapping>(exec), f);
    else
      Kokkos::parallel_for(label, policy<TeamMapping>(exec), f);
  }
};

// The shape, stride, teams and bytes of resolve_team_shape, without its scratch-level choice and check
// (level stays 0): what a launch would ask for, for checks made before anything runs.
template <class Real, class ExecSpace>
TeamLaunch<ExecSpace> plan_team_launch(TeamShape requested, int count, int n, std::size_t reals, const char* what) {
  using policy_type = Kokkos::TeamPolicy<ExecSpace>;
  using scratch_view =
      Kokkos::View<complex_t<Real>*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  TeamLaunch<ExecSpace> out;
  TeamShape s = requested;
  if (s.mapping == TeamShape::Mapping::automatic) {
    if constexpr (plan::lanes_mapping_by_default(backend_of<ExecSpace>))
      s = TeamShape::with_lanes(requested.lanes, requested.per_team);
    else
      s = TeamShape::with_threads(1);
  }
  constexpr std::size_t align = 16 / sizeof(Real);
  out.stride = (reals + align - 1) / align * align;
  const auto bytes_for = [&](std::size_t problems) {
    return team_scratch_bytes<scratch_view>(problems * out.stride / 2);
  };
  const std::size_t level0 = std::size_t(policy_type::scratch_size_max(0));
  if (s.mapping == TeamShape::Mapping::lanes) {
    QGML_REQUIRE(s.lanes <= policy_type::vector_length_max() && (s.lanes & (s.lanes - 1)) == 0,
                 std::string("qgml: ") + what + ": lanes per problem must be a power of two <= " +
                     std::to_string(policy_type::vector_length_max()) + ", got " + std::to_string(s.lanes));
    s = complete_lanes_shape(s, n, bytes_for, level0);
    out.teams = (count + s.per_team - 1) / s.per_team;
    out.bytes = bytes_for(std::size_t(s.per_team));
  } else {
    out.teams = count;
    out.bytes = bytes_for(1);
  }
  out.shape = s;
  return out;
}

// Resolves `requested` for `count` problems of size n with `reals` Reals of scratch each (count >= 1). `what` names the
// kernel in errors. Automatic: host spaces one problem per team of one thread; devices the lanes mapping
// with team_shape_default_lanes(n) lanes and team_shape_block_threads / lanes problems per team, fewer
// where that keeps the team's scratch in shared memory (level 0).
template <class Real, class ExecSpace>
TeamLaunch<ExecSpace> resolve_team_shape(TeamShape requested, int count, int n, std::size_t reals, const char* what) {
  using policy_type = Kokkos::TeamPolicy<ExecSpace>;
  TeamLaunch<ExecSpace> out = plan_team_launch<Real, ExecSpace>(requested, count, n, reals, what);
  const TeamShape& s = out.shape;
  if (out.bytes <= std::size_t(policy_type::scratch_size_max(0))) {
    out.level = 0;
  } else {
    QGML_REQUIRE(out.bytes <= std::size_t(policy_type::scratch_size_max(1)),
                 std::string("qgml: ") + what + " needs " + std::to_string(out.bytes) + " bytes of scratch per team (" +
                     to_string(s) + ", N = " + std::to_string(n) + "), more than this device offers");
    out.level = 1;
  }
  return out;
}

// Runs body(loops, problem, scratch) for the problems of one team of a TeamLaunch's policy (lanes, stride
// and level: the launch's). The lanes mapping gives each thread of the team the problem league_rank *
// team_size + team_rank (none at or past count) and its `stride` Reals of the team's scratch, with
// linalg::VectorLoops; the team mapping gives the team the problem league_rank and the team's scratch,
// with linalg::TeamLoops, or linalg::SerialLoops for a team of one thread (the same arithmetic in the
// same order, without the team-loop machinery). The scratch is taken as complex numbers, so that Kokkos
// aligns it for them: level 0 on CUDA starts 8 (team size + 2) bytes into shared memory, 8 bytes off for
// odd team sizes.
template <class Real, class Member, class Body>
KOKKOS_INLINE_FUNCTION void for_team_problems(LanesMapping, const Member& member, const int lanes,
                                              const std::size_t stride, const int level, const int count,
                                              const Body& body) {
  using scratch_view = Kokkos::View<complex_t<Real>*, typename Member::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const int t = member.league_rank() * member.team_size() + member.team_rank();
  if (t >= count) return;
  const scratch_view scratch(member.team_scratch(level), stride / 2 * std::size_t(member.team_size()));
  Real* const base = reinterpret_cast<Real*>(scratch.data());
  body(linalg::VectorLoops<Member>{member, lanes}, t, base + stride * std::size_t(member.team_rank()));
}

template <class Real, class Member, class Body>
KOKKOS_INLINE_FUNCTION void for_team_problems(TeamMapping, const Member& member, const int /*lanes*/,
                                              const std::size_t stride, const int level, const int /*count*/,
                                              const Body& body) {
  using scratch_view = Kokkos::View<complex_t<Real>*, typename Member::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const scratch_view scratch(member.team_scratch(level), stride / 2);
  Real* const base = reinterpret_cast<Real*>(scratch.data());
  if (member.team_size() == 1)
    body(linalg::SerialLoops{}, member.league_rank(), base);
  else
    body(linalg::TeamLoops<Member>{member}, member.league_rank(), base);
}

// resolve_team_shape, then the lanes mapping's problems per team lowered to what the kernel f can launch
// with (registers: team_size_max; Kokkos aborts on a larger team). The problems of a team are
// independent, so this changes no result.
template <class Real, class ExecSpace, class Functor>
TeamLaunch<ExecSpace> resolve_team_shape(const ExecSpace& exec, const Functor& f, TeamShape requested, int count, int n,
                                         std::size_t reals, const char* what) {
  using policy_type = lanes_policy_type<ExecSpace>;
  TeamLaunch<ExecSpace> out = resolve_team_shape<Real, ExecSpace>(requested, count, n, reals, what);
  if (!out.lanes()) return out;
  const int max = policy_type(exec, 1, 1, out.shape.lanes)
                      .set_scratch_size(out.level, Kokkos::PerTeam(out.bytes / out.shape.per_team))
                      .team_size_max(f, Kokkos::ParallelForTag());
  QGML_REQUIRE(max >= 1, std::string("qgml: ") + what + ": no team of " + to_string(out.shape) + " (" +
                             std::to_string(out.bytes) + " bytes of scratch per team at level " +
                             std::to_string(out.level) + ") fits " + std::to_string(team_shape_min_blocks) +
                             " blocks per multiprocessor of this device; ask for fewer problems per team");
  if (out.shape.per_team > max) {
    requested = out.shape;
    requested.per_team = max;
    out = resolve_team_shape<Real, ExecSpace>(requested, count, n, reals, what);
  }
  return out;
}

}  // namespace qgml
