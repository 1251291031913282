// Which kernel runs: every automatic choice among the kernels of plan/kernel_kinds.hpp, as functions of
// the backend, the precision, N and what the user asked for, and every threshold in N they use. Nothing
// else in qgml decides; the engines call these (the resolve_* templates below for their execution space),
// and plan/kernel_plan.hpp collects them for a run and prints them.
//
// The one rule: on the host the SIMD-packed kernels (a pack of points per thread) run where they apply,
// 2 <= N <= 256, the limit of the packed Householder reduction; on devices the team kernels (one or a
// fraction of a warp per point). Outside the packed range on the host, N = 1 (no excited state) takes the
// whole spectrum, and N > 256 the ground-state team kernel, except training, whose kernels outside that
// range are the separate ones (batched_eigh and the batch GEMM). The measurements behind each threshold
// are in perf/NOTES.md under the section named beside it.
#pragma once

#include <string>

#include "qgml/common/error.hpp"
#include "qgml/plan/kernel_kinds.hpp"

namespace qgml {

// The packed eigensolver (EighVariant::packed) in the automatic choice: every N in
// [eigh_packed_min_n, eigh_packed_max_n] ("Packed (SIMD across matrices) eigensolver"). Above, its scratch
// (4 N^2 W Reals per thread) leaves the caches and was not measured.
inline constexpr int eigh_packed_min_n = 2;
inline constexpr int eigh_packed_max_n = 64;
// Largest N of every packed kernel: an explicit EighVariant::packed, the fused training kernel, the packed
// metric, energy and prediction (scratch 16 MiB per thread in double at N = 256; "The fused path up to
// N = 256").
inline constexpr int eigh_packed_limit_n = 256;
inline constexpr int fused_host_max_n = eigh_packed_limit_n;
inline constexpr int geometry_packed_min_n = 2;
inline constexpr int geometry_packed_max_n = eigh_packed_limit_n;
inline constexpr int energy_packed_max_n = eigh_packed_limit_n;
inline constexpr int predictor_packed_max_n = eigh_packed_limit_n;
// Devices: the team eigensolver from this N, one thread per matrix below.
inline constexpr int eigh_team_min_n = 8;
// Devices: the team eigensolver staged in team scratch up to this N ("batched eigh at N = 16"); above, a
// staged matrix nears what a block holds (N = 48: 40 KB) and was not measured.
inline constexpr int eigh_staged_max_n = 32;
// The fused path solves for the ground state alone (psi_0, and phi = R s by tridiagonal solves, about 4x
// fewer flops than the whole spectrum at large N) from this N; below, the whole eigendecomposition, which
// costs the same at N = 3, 4 ("Fused loss and gradient on CPUs, and the ground-state path (performance
// issue)").
inline constexpr int fused_ground_state_min_n = 5;
// The fused ground-state path in double with its Householder reduction in single precision, refined in
// double, from this N, where the reduction bounds the epoch ("The reduction in single precision, the
// ground state refined in double"). Never in float, which is that precision already.
inline constexpr int fused_mixed_precision_min_n = 64;
// The packed energy and prediction kernels find psi_0 by the lowest eigenvalue of the tridiagonal form and
// inverse iteration from this N; below, by the whole eigendecomposition.
inline constexpr int packed_ground_state_min_n = 3;
// Packs of 16 doubles (two 512-bit vectors per operation) by default on builds for 512-bit vectors ("Packs
// of 16 doubles, and full batch without a shuffle"); elsewhere 8 doubles are two 256-bit vectors already.
#if defined(__AVX512F__)
inline constexpr bool wide_packs_by_default = true;
#else
inline constexpr bool wide_packs_by_default = false;
#endif

namespace plan {

// The eigensolver variant batched_eigh runs for `requested` at N.
constexpr EighVariant eigh_variant(Backend backend, EighVariant requested, int n) {
  const bool host = backend == Backend::host;
  if (requested == EighVariant::packed)
    return (host && n <= eigh_packed_limit_n) ? EighVariant::packed : EighVariant::serial;
  if (requested != EighVariant::automatic) return requested;
  if (host) return (n >= eigh_packed_min_n && n <= eigh_packed_max_n) ? EighVariant::packed : EighVariant::serial;
  return n < eigh_team_min_n ? EighVariant::serial : EighVariant::team;
}

// Where the team eigensolver works for `requested` at N: in the batch Views on the host (scratch is ordinary
// memory there), in team scratch on devices up to eigh_staged_max_n.
constexpr EighStaging eigh_staging(Backend backend, EighStaging requested, int n) {
  if (requested != EighStaging::automatic) return requested;
  if (backend == Backend::host) return EighStaging::none;
  return n <= eigh_staged_max_n ? EighStaging::scratch : EighStaging::none;
}

// The loss-gradient kernel for `requested` at N with the separate kernels' eigensolver `variant` and warm
// start: automatic is fused_host on the host for eigh_packed_min_n <= N <= fused_host_max_n, else
// separate; team on devices. Warm starts, and an explicit variant other than the packed one, run separate;
// fused_host where it does not apply runs separate; on a device it is an error.
inline LossKernel loss_kernel(Backend backend, LossKernel requested, int n,
                              EighVariant variant = EighVariant::automatic, bool warm_start = false) {
  const bool host = backend == Backend::host;
  QGML_REQUIRE(host || requested != LossKernel::fused_host,
               "the fused-host loss kernel runs on host execution spaces only (use team or auto)");
  if (warm_start || requested == LossKernel::separate) return LossKernel::separate;
  if (requested == LossKernel::team) return LossKernel::team;
  if (!host) return variant == EighVariant::automatic ? LossKernel::team : LossKernel::separate;
  if (variant == EighVariant::automatic)
    return (n >= eigh_packed_min_n && n <= fused_host_max_n) ? LossKernel::fused_host : LossKernel::separate;
  return eigh_variant(backend, variant, n) == EighVariant::packed ? LossKernel::fused_host : LossKernel::separate;
}

// What the fused host kernel runs at N: the ground-state path, its reduction in single precision, packs
// of two vectors. The team kernel always takes the ground-state path in the working precision.
struct FusedPath {
  bool ground_state = false, mixed_precision = false, wide_packs = false;
};
constexpr FusedPath fused_path(Precision precision, int n, FusedSpectralPath spectral, FusedReduction reduction,
                               FusedPackWidth width, bool wide_by_default = wide_packs_by_default) {
  const bool in_double = precision == Precision::double_precision;
  FusedPath c;
  c.ground_state = spectral == FusedSpectralPath::ground_state ||
                   (spectral == FusedSpectralPath::automatic && n >= fused_ground_state_min_n);
  c.mixed_precision = in_double && c.ground_state &&
                      (reduction == FusedReduction::single_refined ||
                       (reduction == FusedReduction::automatic && n >= fused_mixed_precision_min_n));
  c.wide_packs = in_double && !c.mixed_precision &&
                 (width == FusedPackWidth::wide || (width == FusedPackWidth::automatic && wide_by_default));
  return c;
}

// Points per pack of the packed kernels: one 64-byte vector (8 doubles, 16 floats), or two with wide packs.
constexpr int pack_lanes(Precision precision, bool wide) {
  const int narrow = precision == Precision::double_precision ? 8 : 16;
  return wide ? 2 * narrow : narrow;
}

// The metric's kernel for `requested` at N (explicit choices are kept; packed on a device or outside its N
// range is an error). ground_state_solver: the analysis runs the default eigensolver without a warm start;
// otherwise the ground-state kernels, which find psi_0 themselves, give way to the separate path and its
// batched_eigh (`requested` is still checked).
inline GeometryKernel geometry_kernel(Backend backend, GeometryKernel requested, int n,
                                      bool ground_state_solver = true) {
  const bool host = backend == Backend::host;
  if (requested == GeometryKernel::packed) {
    QGML_REQUIRE(host, "the packed geometry kernel runs on host execution spaces only (use team or auto)");
    QGML_REQUIRE(n >= geometry_packed_min_n && n <= geometry_packed_max_n,
                 "the packed geometry kernel takes " + std::to_string(geometry_packed_min_n) +
                     " <= N <= " + std::to_string(geometry_packed_max_n) + " (N = " + std::to_string(n) + ")");
  }
  GeometryKernel k = requested;
  if (k == GeometryKernel::automatic) {
    if (!host)
      k = GeometryKernel::team;
    else if (n >= geometry_packed_min_n && n <= geometry_packed_max_n)
      k = GeometryKernel::packed;
    else
      k = n > geometry_packed_max_n ? GeometryKernel::team : GeometryKernel::separate;
  }
  return ground_state_solver ? k : GeometryKernel::separate;
}

// Whether the packed ground-state kernel of the energy and the prediction applies.
constexpr bool packed_ground_state_applies(Backend backend, int n) {
  return backend == Backend::host && n >= 2 && n <= energy_packed_max_n;
}

// The samplers' energy kernel for `requested` at N (packed where it does not apply is an error).
inline EnergyKernel energy_kernel(Backend backend, EnergyKernel requested, int n) {
  const bool packed_ok = packed_ground_state_applies(backend, n);
  if (requested == EnergyKernel::packed)
    QGML_REQUIRE(packed_ok, "qgml::GroundStateEnergy: the packed kernel runs on host spaces for 2 <= N <= " +
                                std::to_string(energy_packed_max_n) + " (N = " + std::to_string(n) + ")");
  if (requested != EnergyKernel::automatic) return requested;
  return packed_ok ? EnergyKernel::packed : EnergyKernel::team;
}

// Whether supervised prediction runs the packed ground-state kernel (else batched_eigh per chunk).
constexpr bool predictor_packed(Backend backend, int n) {
  return backend == Backend::host && n >= 2 && n <= predictor_packed_max_n;
}

// How the packed energy and prediction kernels find psi_0 at N.
constexpr detail::PackedGroundStateMethod packed_ground_state_method(int n) {
  return n >= packed_ground_state_min_n ? detail::PackedGroundStateMethod::tridiagonal_lowest
                                        : detail::PackedGroundStateMethod::eigendecomposition;
}

// The automatic team mapping (linalg/team_shape.hpp): several points per team, a fraction of a warp each,
// on devices; one point per team of one thread on the host.
constexpr bool lanes_mapping_by_default(Backend backend) { return backend == Backend::device; }

}  // namespace plan

// The rules above for an execution space.
template <class ExecSpace>
EighVariant resolve_eigh_variant(EighVariant requested, int n) {
  return plan::eigh_variant(backend_of<ExecSpace>, requested, n);
}
template <class ExecSpace>
EighStaging resolve_eigh_staging(EighStaging requested, int n) {
  return plan::eigh_staging(backend_of<ExecSpace>, requested, n);
}
template <class ExecSpace>
LossKernel resolve_loss_kernel(LossKernel requested, int n, EighVariant variant = EighVariant::automatic,
                               bool warm_start = false) {
  return plan::loss_kernel(backend_of<ExecSpace>, requested, n, variant, warm_start);
}
template <class ExecSpace>
GeometryKernel resolve_geometry_kernel(GeometryKernel requested, int n, bool ground_state_solver = true) {
  return plan::geometry_kernel(backend_of<ExecSpace>, requested, n, ground_state_solver);
}
template <class ExecSpace>
EnergyKernel resolve_energy_kernel(EnergyKernel requested, int n) {
  return plan::energy_kernel(backend_of<ExecSpace>, requested, n);
}

}  // namespace qgml
