// The kernels qgml can run for each piece of per-point work, and the two facts of a build that the
// choice among them depends on (the backend and the precision). What runs is decided in one place:
// plan/kernel_rules.hpp, collected for a run by plan/kernel_plan.hpp.
#pragma once

#include <string>
#include <type_traits>

#include "qgml/common/types.hpp"

namespace qgml {

// Where the kernels run: host (Serial, OpenMP: SIMD packs of points per thread) or device (CUDA: teams).
enum class Backend { host, device };
template <class ExecSpace>
inline constexpr Backend backend_of = is_host_space_v<ExecSpace> ? Backend::host : Backend::device;

enum class Precision { single_precision, double_precision };
template <class Real>
inline constexpr Precision precision_of =
    std::is_same_v<Real, float> ? Precision::single_precision : Precision::double_precision;

// The loss and gradient of a batch (train/loss_kernel.hpp describes the three).
enum class LossKernel { automatic, fused_host, team, separate };

// The batched Hermitian eigensolver of the separate kernels (linalg/batched_eigh.hpp).
enum class EighVariant {
  automatic,  // host spaces: packed for eigh_packed_min_n <= N <= eigh_packed_max_n, serial otherwise;
              // devices: serial for N < eigh_team_min_n, team otherwise
  serial,     // one thread per matrix
  team,       // one team per matrix
  packed,     // one thread per pack of linalg::packed_eigh_width<Real> matrices in SIMD lockstep
              // (linalg/hermitian_eigensolver_packed.hpp); host spaces only: serial on devices, for
              // warm starts and for N > eigh_packed_limit_n
};

// Team variant of the eigensolver: where the solve works (linalg/batched_eigh.hpp).
enum class EighStaging {
  automatic,  // host spaces: none; devices: scratch up to eigh_staged_max_n
  none,       // A and V in the batch Views
  scratch     // one N x N working array in team scratch
};

// The metric of the analysis (geometry/quantum_geometry.hpp): packed and team from the ground state alone,
// separate from the whole spectrum.
enum class GeometryKernel { automatic, team, separate, packed };

// The ground-state energy and reconstruction of the samplers (ground_state/ground_state_energy.hpp).
enum class EnergyKernel { automatic, packed, team };

// The fused host path's spectral work, reduction precision and pack width (train/loss_gradient.hpp).
enum class FusedSpectralPath { automatic, ground_state, full_spectrum };
enum class FusedReduction { automatic, single_refined, full };
enum class FusedPackWidth { automatic, narrow, wide };

// The names the settings use (auto, fused-host, team, separate; auto, packed, team, separate).
LossKernel parse_loss_kernel(const std::string& s);
std::string to_string(LossKernel k);
GeometryKernel parse_geometry_kernel(const std::string& s);
std::string to_string(GeometryKernel k);
std::string to_string(EighVariant v);
std::string to_string(Backend b);
inline const char* to_string(EighStaging staging) {
  switch (staging) {
    case EighStaging::none:
      return "none";
    case EighStaging::scratch:
      return "scratch";
    default:
      return "automatic";
  }
}
inline const char* to_string(EnergyKernel k) {
  return k == EnergyKernel::packed ? "packed" : (k == EnergyKernel::team ? "team" : "auto");
}

namespace detail {

// How a packed ground-state kernel (energy, prediction) finds psi_0 (ground_state/ground_state_packed.hpp).
enum class PackedGroundStateMethod { eigendecomposition, tridiagonal, tridiagonal_lowest };

}  // namespace detail

}  // namespace qgml
