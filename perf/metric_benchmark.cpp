// Quantum-metric benchmark (suite "metric"): for T points of the unit sphere and a random Hermitian
// configuration (D = 3), H(x), its eigendecomposition, the Eq. 7 metric, its eigenvalues and the
// dimension estimate per point — what perf/baselines/torch_metric.py does in PyTorch.
//
//   qgml_bench_metric [--N 3 8 16 32 64] [--T 2500 100000] [--precision double] [--chunk 25000]
//                     [--impl qgml qgml-team qgml-separate] [--repeats 5] [--warmup 1] [--out FILE]
//                     [--shapes auto lanes8x16 team32] (the team kernel's TeamShape, one run each)
//   qgml: the default kernel (CPUs: packed, one SIMD pack of points per thread; GPUs: team; both the
//   ground state and one tridiagonal solve per direction); qgml-team: the team kernel;
//   qgml-separate: the whole eigendecomposition and the sums over states.
#include <Kokkos_Core.hpp>

#include <string>

#include "qgml/common/error.hpp"
#include "qgml/data/datasets.hpp"
#include "qgml/geometry/quantum_geometry.hpp"
#include "qgml/model/initializers.hpp"

#include "bench_common.hpp"

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using qgml::bench::Args;

template <class Real>
void run(const Args& args, const std::string& impl, const std::string& precision, int n, int count,
         const std::string& shape) {
  const Exec exec;
  const int d = 3, chunk = std::min(count, args.integer("chunk", 25000));
  auto data = qgml::sphere_points<Real>(exec, count, d, 0.0, 42);
  auto config = qgml::gaussian_hermitian_configuration<Real>(d, n, 1.0, 7, exec);
  qgml::QuantumGeometry<Real, Exec> geometry(d, n, chunk, false);
  qgml::GeometrySettings settings;
  settings.team_shape = qgml::bench::parse_team_shape(shape);
  if (impl == "qgml-separate")
    settings.kernel = qgml::GeometryKernel::separate;
  else if (impl == "qgml-team")
    settings.kernel = qgml::GeometryKernel::team;
  else if (impl != "qgml")
    throw qgml::Error("qgml_bench_metric: --impl takes qgml, qgml-team and qgml-separate, not '" + impl + "'");
  const auto t = qgml::bench::time_runs(
      exec, args.integer("warmup", 1), args.integer("repeats", 5), []() {},
      [&]() {
        for (int start = 0; start < count; start += chunk) {
          const int m = std::min(chunk, count - start);
          geometry.compute(exec, config, Kokkos::subview(data, Kokkos::make_pair(start, start + m), Kokkos::ALL),
                           settings);
        }
      });
  auto line = qgml::bench::context<Exec>("metric", impl);
  line.add("N", n).add("D", d).add("T", count).add("precision", precision).add("chunk", chunk);
  line.add("repeats", args.integer("repeats", 5)).add("median_s", t.median).add("min_s", t.min);
  line.add("points_per_s", count / t.median).add("team_shape", shape);
  qgml::bench::emit(line, args.string("out", ""));
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  const Args args(argc, argv);
  for (const auto& precision : args.strings("precision", {"double"}))
    for (int count : args.ints("T", {2500, 100000}))
      for (int n : args.ints("N", {3, 8, 16, 32, 64}))
        for (const auto& impl : args.strings("impl", {"qgml"})) {
          for (const auto& shape : args.strings("shapes", {"auto"})) {
            if (precision == "double")
              run<double>(args, impl, precision, n, count, shape);
            else
              run<float>(args, impl, precision, n, count, shape);
          }
        }
  return 0;
}
