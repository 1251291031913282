// The kernel plan (plan/kernel_plan.hpp): one rule over every backend, precision and N, the printed lines,
// the errors of requests that cannot run, and agreement with what the engines run.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/geometry/quantum_geometry.hpp"
#include "qgml/ground_state/ground_state_energy.hpp"
#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/plan/kernel_plan.hpp"
#include "qgml/train/loss_gradient.hpp"
#include "qgml/train/target_predictor.hpp"

#include "test_support.hpp"

using namespace qgml;

namespace {

// The requests the walk tries: the defaults, each kernel named explicitly where it can run, and each
// switch of training turned.
std::vector<KernelRequest> plan_requests(Backend backend, int n) {
  std::vector<KernelRequest> out(1);
  const bool host = backend == Backend::host, packed_n = n >= 2 && n <= 256;
  for (LossKernel k : {LossKernel::team, LossKernel::separate}) out.push_back(KernelRequest{}), out.back().loss = k;
  if (host) out.push_back(KernelRequest{}), out.back().loss = LossKernel::fused_host;
  out.push_back(KernelRequest{}), out.back().warm_start = true;
  out.push_back(KernelRequest{}), out.back().ground_state_path = false;
  out.push_back(KernelRequest{}), out.back().mixed_precision = false;
  out.push_back(KernelRequest{}), out.back().wide_packs = false;
  for (GeometryKernel k : {GeometryKernel::team, GeometryKernel::separate})
    out.push_back(KernelRequest{}), out.back().geometry = k;
  if (host && packed_n) out.push_back(KernelRequest{}), out.back().geometry = GeometryKernel::packed;
  out.push_back(KernelRequest{}), out.back().energy = EnergyKernel::team;
  if (host && packed_n) out.push_back(KernelRequest{}), out.back().energy = EnergyKernel::packed;
  out.push_back(KernelRequest{}), out.back().analysis = false;
  return out;
}

bool has_line(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("the kernel plan: one rule over every backend, precision and N = 1..512", "[plan]") {
  for (Backend backend : {Backend::host, Backend::device})
    for (Precision precision : {Precision::double_precision, Precision::single_precision})
      for (int n = 1; n <= 512; ++n)
        for (const KernelRequest& r : plan_requests(backend, n)) {
          INFO("backend " << to_string(backend) << ", "
                          << (precision == Precision::double_precision ? "double" : "float") << ", N = " << n);
          const KernelPlan p = plan_kernels(backend, precision, n, r);
          const bool host = backend == Backend::host, in_double = precision == Precision::double_precision;
          const bool packed_n = n >= 2 && n <= 256;
          // The one rule: on the host the packed kernels wherever 2 <= N <= 256, on devices the team kernels.
          if (r.loss == LossKernel::automatic && !r.warm_start)
            CHECK(p.loss == (host ? (packed_n ? LossKernel::fused_host : LossKernel::separate) : LossKernel::team));
          if (r.geometry == GeometryKernel::automatic)
            CHECK(p.geometry == (!host      ? GeometryKernel::team
                                 : packed_n ? GeometryKernel::packed
                                 : n == 1   ? GeometryKernel::separate
                                            : GeometryKernel::team));
          if (r.energy == EnergyKernel::automatic)
            CHECK(p.energy == (host && packed_n ? EnergyKernel::packed : EnergyKernel::team));
          CHECK(p.predictor_packed == (host && packed_n));
          CHECK(p.eigh == (host ? (n <= 64 && n >= 2 ? EighVariant::packed : EighVariant::serial)
                                : (n < 8 ? EighVariant::serial : EighVariant::team)));
          CHECK(p.eigh_staging == (!host && n <= 32 ? EighStaging::scratch : EighStaging::none));
          CHECK(p.lanes_mapping == !host);
          CHECK(p.packed_ground_state == (n >= 3 ? qgml::detail::PackedGroundStateMethod::tridiagonal_lowest
                                                 : qgml::detail::PackedGroundStateMethod::eigendecomposition));
          // What is asked for explicitly runs, or the documented fallback.
          if (r.warm_start || r.loss == LossKernel::separate) CHECK(p.loss == LossKernel::separate);
          if (r.loss == LossKernel::team && !r.warm_start) CHECK(p.loss == LossKernel::team);
          if (r.loss == LossKernel::fused_host && !r.warm_start)
            CHECK(p.loss == (packed_n ? LossKernel::fused_host : LossKernel::separate));
          if (r.geometry != GeometryKernel::automatic) CHECK(p.geometry == r.geometry);
          if (r.energy != EnergyKernel::automatic) CHECK(p.energy == r.energy);
          // Host-only kernels never on a device.
          if (!host) {
            CHECK(p.loss != LossKernel::fused_host);
            CHECK(p.geometry != GeometryKernel::packed);
            CHECK(p.energy != EnergyKernel::packed);
          }
          // The fused path's refinements: only where it runs, the mixed precision only in double from N = 64
          // on its ground-state path, wide packs only in double and never with the mixed precision.
          const bool fused = p.loss == LossKernel::fused_host;
          CHECK(fused ==
                (host && packed_n && !r.warm_start && r.loss != LossKernel::team && r.loss != LossKernel::separate));
          CHECK(p.fused.ground_state == (fused && r.ground_state_path && n >= 5));
          CHECK(p.fused.mixed_precision == (fused && in_double && r.ground_state_path && r.mixed_precision && n >= 64));
          CHECK(p.fused.wide_packs ==
                (fused && in_double && !p.fused.mixed_precision && r.wide_packs && wide_packs_by_default));
          CHECK(p.pack_lanes == (!fused ? 0 : !in_double ? 16 : p.fused.wide_packs ? 16 : 8));
          // The printed lines: one per automatic choice, naming what runs.
          const std::vector<std::string> lines = p.describe();
          const std::size_t expected = (r.loss == LossKernel::automatic ? 1 : 0) +
                                       (r.analysis && r.geometry == GeometryKernel::automatic ? 1 : 0) +
                                       (in_double && p.fused.mixed_precision ? 1 : 0) +
                                       (in_double && p.fused.wide_packs ? 1 : 0);
          CHECK(lines.size() == expected);
          for (const std::string& l : lines) CHECK(l.rfind("automatic: ", 0) == 0);
          if (r.loss == LossKernel::automatic) CHECK(has_line(lines, "training.kernel = " + to_string(p.loss) + " ("));
          if (r.analysis && r.geometry == GeometryKernel::automatic)
            CHECK(has_line(lines, "analysis.kernel = " + to_string(p.geometry) + " ("));
        }
}

TEST_CASE("the kernel plan: the printed lines of the defaults on CPUs and GPUs", "[plan]") {
  const KernelPlan host = plan_kernels(Backend::host, Precision::double_precision, 8);
  const std::vector<std::string> lines = host.describe();
  REQUIRE(lines.size() >= 2);
  CHECK(lines.front() == "automatic: training.kernel = fused-host (the fused kernel on CPUs for 2 <= N <= 256)");
  CHECK(lines.back() ==
        "automatic: analysis.kernel = packed (the packed ground-state kernel on CPUs for 2 <= N <= 256)");
  const std::vector<std::string> big = plan_kernels(Backend::host, Precision::double_precision, 300).describe();
  REQUIRE(big.size() == 2);
  CHECK(big[0] == "automatic: training.kernel = separate (the separate kernels on CPUs outside 2 <= N <= 256)");
  CHECK(big[1] == "automatic: analysis.kernel = team (the team kernel on CPUs for N > 256)");
  const std::vector<std::string> mixed = plan_kernels(Backend::host, Precision::double_precision, 64).describe();
  CHECK(has_line(mixed, "automatic: the ground state's reduction in single precision, refined in double"));
  CHECK(!has_line(plan_kernels(Backend::host, Precision::single_precision, 64).describe(), "single precision"));
  const std::vector<std::string> gpu = plan_kernels(Backend::device, Precision::double_precision, 8).describe();
  REQUIRE(gpu.size() == 2);
  CHECK(gpu[0] == "automatic: training.kernel = team (the team kernel on GPUs)");
  CHECK(gpu[1] == "automatic: analysis.kernel = team (the team kernel on GPUs)");
  KernelRequest warm;
  warm.warm_start = true;
  CHECK(plan_kernels(Backend::host, Precision::double_precision, 8, warm).describe().front() ==
        "automatic: training.kernel = separate (training.warm_start needs the separate kernels)");
}

TEST_CASE("the kernel plan: the ranges of N with one plan cover 1 .. 512 in order", "[plan]") {
  for (const Backend backend : {Backend::host, Backend::device})
    for (const Precision precision : {Precision::double_precision, Precision::single_precision}) {
      INFO(to_string(backend) << (precision == Precision::double_precision ? " double" : " float"));
      const std::vector<KernelPlanRange> ranges = plan_ranges(backend, precision, 512);
      REQUIRE(!ranges.empty());
      CHECK(ranges.front().first == 1);
      CHECK(ranges.back().last == 512);
      for (std::size_t i = 0; i < ranges.size(); ++i) {
        CHECK(ranges[i].first <= ranges[i].last);
        if (i > 0) {
          CHECK(ranges[i].first == ranges[i - 1].last + 1);
          CHECK(ranges[i].summary != ranges[i - 1].summary);
        }
        for (int n = ranges[i].first; n <= ranges[i].last; ++n)
          CHECK(plan_kernels(backend, precision, n).summary() == ranges[i].summary);
      }
    }
  // The host in double: the fused kernel's three regimes between the separate kernels at N = 1 and N > 256.
  const std::vector<KernelPlanRange> host = plan_ranges(Backend::host, Precision::double_precision, 512);
  CHECK(plan_kernels(Backend::host, Precision::double_precision, 1).summary().rfind("training separate, ", 0) == 0);
  CHECK(plan_kernels(Backend::host, Precision::double_precision, 3)
            .summary()
            .rfind("training fused-host (whole spectrum, packs of ", 0) == 0);
  CHECK(plan_kernels(Backend::host, Precision::double_precision, 100)
            .summary()
            .rfind("training fused-host (ground state, mixed precision, packs of ", 0) == 0);
  CHECK(host.back().summary.rfind("training separate, ", 0) == 0);
  CHECK(host.back().first == fused_host_max_n + 1);
  CHECK(plan_ranges(Backend::device, Precision::double_precision, 512).front().summary.rfind("training team, ", 0) ==
        0);
  CHECK_THROWS_AS(plan_ranges(Backend::host, Precision::double_precision, 0), Error);
}

TEST_CASE("the kernel plan: requests that cannot run are errors", "[plan]") {
  KernelRequest fused;
  fused.loss = LossKernel::fused_host;
  CHECK_THROWS_AS(plan_kernels(Backend::device, Precision::double_precision, 8, fused), Error);
  KernelRequest geometry;
  geometry.geometry = GeometryKernel::packed;
  CHECK_THROWS_AS(plan_kernels(Backend::device, Precision::double_precision, 8, geometry), Error);
  CHECK_THROWS_AS(plan_kernels(Backend::host, Precision::double_precision, 1, geometry), Error);
  CHECK_THROWS_AS(plan_kernels(Backend::host, Precision::double_precision, 257, geometry), Error);
  KernelRequest energy;
  energy.energy = EnergyKernel::packed;
  CHECK_THROWS_AS(plan_kernels(Backend::host, Precision::single_precision, 257, energy), Error);
  CHECK_THROWS_AS(plan_kernels(Backend::device, Precision::single_precision, 8, energy), Error);
  CHECK_THROWS_AS(plan_kernels(Backend::host, Precision::double_precision, 0), Error);
}

TEMPLATE_TEST_CASE("the kernel plan is what the engines run", "[plan]", QGML_TEST_CONFIGS) {
  using Space = typename TestType::execution_space;
  using Real = typename TestType::real_type;
  for (int n : {1, 2, 3, 4, 5, 8, 16, 33, 63, 64, 65}) {
    INFO("N = " << n);
    for (const KernelRequest& r : plan_requests(backend_of<Space>, n)) {
      const KernelPlan p = plan_kernels<Real, Space>(n, r);
      LossGradient<Real, Space> engine(3, n, 4, r.loss);
      engine.set_spectral_path(fused_spectral_path(r));
      engine.set_reduction_precision(fused_reduction(r));
      engine.set_pack_width(fused_pack_width(r));
      EighOptions eigh;
      eigh.warm_start = r.warm_start;
      CHECK(engine.kernel(eigh) == p.loss);
      if (p.loss == LossKernel::fused_host) {
        CHECK(engine.ground_state_path() == p.fused.ground_state);
        CHECK(engine.mixed_precision_path() == p.fused.mixed_precision);
        CHECK(engine.wide_pack_path() == p.fused.wide_packs);
        CHECK(engine.pack_lanes() == p.pack_lanes);
      }
      GeometrySettings geometry;
      geometry.kernel = r.geometry;
      CHECK(QuantumGeometry<Real, Space>::needs(3, n, 4, geometry).kernel == p.geometry);
      CHECK(GroundStateEnergy<Real, Space>(3, n, r.energy).kernel() == p.energy);
      CHECK(TargetPredictor<Real, Space>(n, 1).packed() == p.predictor_packed);
      CHECK(resolve_eigh_variant<Space>(EighVariant::automatic, n) == p.eigh);
      CHECK(resolve_eigh_staging<Space>(EighStaging::automatic, n) == p.eigh_staging);
    }
  }
  // Above the packed range: the metric, the energy and the prediction without an engine of training.
  for (int n : {256, 257, 300}) {
    const KernelPlan p = plan_kernels<Real, Space>(n);
    CHECK(QuantumGeometry<Real, Space>::needs(3, n, 4, GeometrySettings{}).kernel == p.geometry);
    CHECK(GroundStateEnergy<Real, Space>(3, n).kernel() == p.energy);
    CHECK(TargetPredictor<Real, Space>(n, 1).packed() == p.predictor_packed);
  }
}
