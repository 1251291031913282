// Every kernel a run uses, decided once from the backend, the precision, N and the user's settings by the
// rules of plan/kernel_rules.hpp, with the printed `automatic:` lines of qgml train. The engines
// (LossGradient, QuantumGeometry, GroundStateEnergy, TargetPredictor, batched_eigh) ask the same rules, so
// what a plan says is what runs (tests/plan/test_kernel_plan.cpp checks both).
#pragma once

#include <string>
#include <vector>

#include "qgml/plan/kernel_rules.hpp"

namespace qgml {

// What the user asked for: the kernel settings of training (training.kernel, training.warm_start,
// training.ground_state_path, training.mixed_precision, training.wide_packs), of the analysis
// (analysis.kernel) and of the samplers (sample.kernel). Automatic everywhere by default.
struct KernelRequest {
  LossKernel loss = LossKernel::automatic;
  bool warm_start = false;        // warm-started eigensolves in training (the separate kernels)
  bool ground_state_path = true;  // false: the fused path solves for the whole spectrum
  bool mixed_precision = true;    // false: the fused path's reduction stays in double
  bool wide_packs = true;         // false: packs of one vector
  GeometryKernel geometry = GeometryKernel::automatic;
  bool analysis = true;  // the run computes the metric (describe() reports its kernel)
  EnergyKernel energy = EnergyKernel::automatic;
};

// The choices for one run.
struct KernelPlan {
  Backend backend = Backend::host;
  Precision precision = Precision::double_precision;
  int n = 0;
  KernelRequest request;
  LossKernel loss = LossKernel::automatic;    // training's loss and gradient
  plan::FusedPath fused;                      // what the fused kernel runs (all false where it does not run)
  int pack_lanes = 0;                         // points per pack of the fused kernel (0 where it does not run)
  EighVariant eigh = EighVariant::automatic;  // the separate kernels' batched_eigh
  EighStaging eigh_staging = EighStaging::automatic;
  GeometryKernel geometry = GeometryKernel::automatic;  // the analysis's metric
  EnergyKernel energy = EnergyKernel::automatic;        // the samplers' energies
  bool predictor_packed = false;                        // supervised prediction
  detail::PackedGroundStateMethod packed_ground_state = detail::PackedGroundStateMethod::eigendecomposition;
  bool lanes_mapping = false;  // the team kernels' automatic mapping: several points per team

  // The `automatic:` lines qgml train prints: one per choice the request left automatic (training.kernel,
  // analysis.kernel) and one for each automatic refinement of the fused path that runs (the mixed
  // precision, the wide packs).
  std::vector<std::string> describe() const;

  // Every choice in one line: "training fused-host (ground state, mixed precision, packs of 16), eigh
  // packed, metric packed, energies packed, prediction packed" (qgml info); "prediction by the eigh": H
  // solved by batched_eigh.
  std::string summary() const;
};

// The plan at N (>= 1); errors for requests that cannot run (a host-only kernel on a device, packed outside
// its N range).
KernelPlan plan_kernels(Backend backend, Precision precision, int n, const KernelRequest& request = {});

// The N in [first, last] whose plans have one summary.
struct KernelPlanRange {
  int first = 0, last = 0;
  std::string summary;
};

// The plans of N = 1 .. max_n (>= 1) as ranges of equal summaries, in order and without gaps (qgml info).
std::vector<KernelPlanRange> plan_ranges(Backend backend, Precision precision, int max_n,
                                         const KernelRequest& request = {});

template <class Real, class ExecSpace>
KernelPlan plan_kernels(int n, const KernelRequest& request = {}) {
  return plan_kernels(backend_of<ExecSpace>, precision_of<Real>, n, request);
}

// The fused path's settings of LossGradient for a request (the engine's automatic choices, or turned off).
inline FusedSpectralPath fused_spectral_path(const KernelRequest& r) {
  return r.ground_state_path ? FusedSpectralPath::automatic : FusedSpectralPath::full_spectrum;
}
inline FusedReduction fused_reduction(const KernelRequest& r) {
  return r.mixed_precision ? FusedReduction::automatic : FusedReduction::full;
}
inline FusedPackWidth fused_pack_width(const KernelRequest& r) {
  return r.wide_packs ? FusedPackWidth::automatic : FusedPackWidth::narrow;
}

}  // namespace qgml
