// Which implementation computes the loss and gradient of a batch (LossGradient::compute). All give the
// same loss, gradient and per-point terms to rounding (tests/train/test_loss_gradient.cpp):
//  - fused_host: one kernel per chunk of SIMD packs of points (loss_gradient_packed.hpp), host spaces
//    only, 2 <= N <= fused_host_max_n (256, the packed eigensolver's limit);
//  - team: one team per point on the ground-state path (loss_gradient_team.hpp): H(x) in team scratch,
//    team Householder reduction, E_0 / E_1 / E_max by bisection, z_0 by inverse iteration, phi by the
//    reduced-resolvent solve; the batch gradient as one GEMM. Every backend; the GPU kernel;
//  - separate: batch kernels (build H, batched_eigh, per-point terms, the same GEMM); the only one
//    that takes warm-started eigensolves.
#pragma once

#include <string>

#include "qgml/common/error.hpp"
#include "qgml/common/types.hpp"
#include "qgml/linalg/batched_eigh.hpp"

namespace qgml {

enum class LossKernel { automatic, fused_host, team, separate };

LossKernel parse_loss_kernel(const std::string& s);  // auto, fused-host, team, separate
std::string to_string(LossKernel k);

// Largest N of the fused host kernel. Above N = 64 its per-thread scratch (about 4 W N^2 Reals: 16 MiB
// at N = 256 in double) leaves the L2 cache, yet it still beats the separate kernels' full
// eigendecomposition per point: 5.8x at N = 128, 6.8x at N = 256 (perf/NOTES.md "The fused path up to
// N = 256"). The automatic eigensolver variant of batched_eigh keeps its own, measured range.
inline constexpr int fused_host_max_n = eigh_packed_limit_n;

// The kernel that runs for `requested` on ExecSpace at N: automatic is fused_host on host spaces for
// eigh_packed_min_n <= N <= fused_host_max_n, else separate; team on devices. Warm starts and an explicit
// eigensolver variant other than the one the fused path uses run separate; fused_host where it does not
// apply runs separate; on a device it is an error.
template <class ExecSpace>
LossKernel resolve_loss_kernel(LossKernel requested, int n, EighVariant variant = EighVariant::automatic,
                               bool warm_start = false) {
  constexpr bool host = is_host_space_v<ExecSpace>;
  QGML_REQUIRE(host || requested != LossKernel::fused_host,
               "the fused-host loss kernel runs on host execution spaces only (use team or auto)");
  if (warm_start || requested == LossKernel::separate) return LossKernel::separate;
  if (requested == LossKernel::team) return LossKernel::team;
  if (!host) return variant == EighVariant::automatic ? LossKernel::team : LossKernel::separate;
  if (variant == EighVariant::automatic)
    return (n >= eigh_packed_min_n && n <= fused_host_max_n) ? LossKernel::fused_host : LossKernel::separate;
  return resolve_eigh_variant<ExecSpace>(variant, n) == EighVariant::packed ? LossKernel::fused_host
                                                                            : LossKernel::separate;
}

}  // namespace qgml
