#include "qgml/plan/kernel_plan.hpp"

#include <string>

#include "qgml/common/error.hpp"

namespace qgml {

KernelPlan plan_kernels(Backend backend, Precision precision, int n, const KernelRequest& request) {
  QGML_REQUIRE(n >= 1, "qgml::plan_kernels: N must be >= 1, got " + std::to_string(n));
  KernelPlan p;
  p.backend = backend;
  p.precision = precision;
  p.n = n;
  p.request = request;
  p.loss = plan::loss_kernel(backend, request.loss, n, EighVariant::automatic, request.warm_start);
  if (p.loss == LossKernel::fused_host) {
    p.fused = plan::fused_path(precision, n, fused_spectral_path(request), fused_reduction(request),
                               fused_pack_width(request));
    p.pack_lanes = plan::pack_lanes(precision, p.fused.wide_packs);
  }
  p.eigh = plan::eigh_variant(backend, EighVariant::automatic, n);
  p.eigh_staging = plan::eigh_staging(backend, EighStaging::automatic, n);
  p.geometry = plan::geometry_kernel(backend, request.geometry, n);
  p.energy = plan::energy_kernel(backend, request.energy, n);
  p.predictor_packed = plan::predictor_packed(backend, n);
  p.packed_ground_state = plan::packed_ground_state_method(n);
  p.lanes_mapping = plan::lanes_mapping_by_default(backend);
  return p;
}

std::vector<std::string> KernelPlan::describe() const {
  const bool host = backend == Backend::host;
  const std::string packed_range = std::to_string(eigh_packed_min_n) + " <= N <= " + std::to_string(fused_host_max_n);
  std::vector<std::string> lines;
  if (request.loss == LossKernel::automatic)
    lines.push_back("automatic: training.kernel = " + to_string(loss) + " (" +
                    (request.warm_start               ? std::string("training.warm_start needs the separate kernels")
                     : !host                          ? std::string("the team kernel on GPUs")
                     : loss == LossKernel::fused_host ? "the fused kernel on CPUs for " + packed_range
                                                      : "the separate kernels on CPUs outside " + packed_range) +
                    ")");
  if (precision == Precision::double_precision && loss == LossKernel::fused_host && fused.mixed_precision)
    lines.push_back(
        "automatic: the ground state's reduction in single precision, refined in double to double accuracy (N >= " +
        std::to_string(fused_mixed_precision_min_n) + "; training.mixed_precision = false keeps it in double)");
  if (precision == Precision::double_precision && loss == LossKernel::fused_host && fused.wide_packs)
    lines.push_back("automatic: the fused kernel in packs of " + std::to_string(pack_lanes) +
                    " points, two 512-bit vectors per operation (training.wide_packs = false: " +
                    std::to_string(plan::pack_lanes(precision, false)) + ")");
  if (request.analysis && request.geometry == GeometryKernel::automatic)
    lines.push_back("automatic: analysis.kernel = " + to_string(geometry) + " (" +
                    (!host ? std::string("the team kernel on GPUs")
                     : geometry == GeometryKernel::packed
                         ? "the packed ground-state kernel on CPUs for " + std::to_string(geometry_packed_min_n) +
                               " <= N <= " + std::to_string(geometry_packed_max_n)
                     : geometry == GeometryKernel::team
                         ? "the team kernel on CPUs for N > " + std::to_string(geometry_packed_max_n)
                         : std::string("the whole spectrum on CPUs for N = 1")) +
                    ")");
  return lines;
}

std::string KernelPlan::summary() const {
  std::string training = "training " + to_string(loss);
  if (loss == LossKernel::fused_host) {
    training += fused.ground_state ? " (ground state" : " (whole spectrum";
    if (fused.mixed_precision) training += ", mixed precision";
    training += ", packs of " + std::to_string(pack_lanes) + ")";
  }
  return training + ", eigh " + to_string(eigh) + ", metric " + to_string(geometry) + ", energies " +
         to_string(energy) + ", prediction " + (predictor_packed ? "packed" : "by the eigh");
}

std::vector<KernelPlanRange> plan_ranges(Backend backend, Precision precision, int max_n,
                                         const KernelRequest& request) {
  QGML_REQUIRE(max_n >= 1, "qgml::plan_ranges: max_n must be >= 1, got " + std::to_string(max_n));
  std::vector<KernelPlanRange> ranges;
  for (int n = 1; n <= max_n; ++n) {
    std::string s = plan_kernels(backend, precision, n, request).summary();
    if (!ranges.empty() && ranges.back().summary == s)
      ranges.back().last = n;
    else
      ranges.push_back({n, n, std::move(s)});
  }
  return ranges;
}

}  // namespace qgml
