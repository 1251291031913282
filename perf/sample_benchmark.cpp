// Sampling benchmark (suite "sample"): all chains of ULA, MALA or HMC advanced by --steps iterations
// on the fuzzy sphere A_k = J_k / j (D = 3), as perf/baselines/torch_sample.py does in PyTorch, with
// the same fixed step size (no adaptation) so that both do the same number of energy evaluations:
// one per iteration (ULA, MALA) or L (HMC).
//
//   qgml_bench_sample [--N 8] [--chains 10000] [--steps 20] [--sampler ula mala hmc] [--leapfrog 10]
//                     [--beta 1] [--step 0.05 (ula, mala) / 0.1 (hmc)] [--precision double float]
//                     [--kernel auto packed team] [--repeats 5] [--warmup 1] [--out FILE]
//
// Flops per energy evaluation (nominal, real): H = S - sum_k x_k A_k + |x|^2/2 (4 D N^2), the complex
// Householder reduction (16/3 N^3), the QL eigenvalues and inverse iteration (~30 N), psi = Q z_0
// (8 N^2), xbar (8 D N^2): 16/3 N^3 + 12 D N^2 + 8 N^2. Below N = 5 the whole eigendecomposition runs
// instead; the nominal count is kept for comparison.
#include <Kokkos_Core.hpp>

#include <cmath>
#include <string>

#include "qgml/common/error.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/sample/chain_sampler.hpp"

#include "bench_common.hpp"

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using qgml::bench::Args;

double energy_flops(int n, int d) { return 16.0 / 3.0 * n * n * n + 12.0 * d * n * n + 8.0 * n * n; }

template <class Real>
void run(const Args& args, const std::string& sampler_name, const std::string& kernel_name,
         const std::string& precision, int n) {
  const Exec exec;
  const int d = 3, chains = args.integer("chains", 10000), steps = args.integer("steps", 20);
  const double j = 0.5 * (n - 1);
  const auto config = qgml::fuzzy_sphere_configuration<Real>(n, n > 1 ? 1 / j : 1.0, exec);
  qgml::SamplerSettings s;
  s.kind = qgml::parse_sampler_kind(sampler_name);
  s.beta = args.real("beta", 1.0);
  s.step_size = args.real("step", s.kind == qgml::SamplerKind::hmc ? 0.1 : 0.05);
  s.leapfrog_steps = args.integer("leapfrog", 10);
  s.adapt = false;
  s.warmup = 0;
  const qgml::EnergyKernel kernel = kernel_name == "packed" ? qgml::EnergyKernel::packed
                                    : kernel_name == "team" ? qgml::EnergyKernel::team
                                                            : qgml::EnergyKernel::automatic;
  if (kernel == qgml::EnergyKernel::automatic && kernel_name != "auto")
    throw qgml::Error("qgml_bench_sample: --kernel takes auto, packed and team, not '" + kernel_name + "'");
  qgml::ChainSampler<Real, Exec> sampler(d, n, chains, s, kernel);
  sampler.start(exec, config, qgml::gaussian_chain_start<Real>(exec, chains, {0.0, 0.0, 0.0}, 1.0, 1234));
  const long first = sampler.iteration();
  const auto t = qgml::bench::time_runs(
      exec, args.integer("warmup", 1), args.integer("repeats", 5), []() {},
      [&]() {
        for (int i = 0; i < steps; ++i) sampler.step(exec, config);
      });
  auto sum = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sampler.acceptance_sum());
  double acceptance = 0;
  for (int c = 0; c < chains; ++c) acceptance += sum(c);
  acceptance /= double(chains) * double(sampler.iteration() - first);
  const int evaluations = s.kind == qgml::SamplerKind::hmc ? s.leapfrog_steps : 1;
  auto line = qgml::bench::context<Exec>("sample", "qgml");
  line.add("N", n).add("D", d).add("precision", precision).add("sampler", sampler_name);
  line.add("kernel", qgml::to_string(sampler.kernel())).add("chains", chains).add("steps", steps);
  line.add("beta", s.beta).add("step_size", s.step_size).add("leapfrog", s.leapfrog_steps);
  line.add("energy_evaluations", evaluations).add("repeats", args.integer("repeats", 5));
  line.add("median_s", t.median).add("min_s", t.min);
  line.add("chain_steps_per_s", double(chains) * steps / t.median);
  line.add("acceptance", s.kind == qgml::SamplerKind::ula ? std::nan("") : acceptance);
  line.add("gflops", energy_flops(n, d) * evaluations * double(chains) * steps / t.median / 1e9);
  qgml::bench::emit(line, args.string("out", ""));
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  const Args args(argc, argv);
  for (const auto& precision : args.strings("precision", {"double", "float"}))
    for (int n : args.ints("N", {8}))
      for (const auto& sampler : args.strings("sampler", {"ula", "mala", "hmc"}))
        for (const auto& kernel : args.strings("kernel", {"auto"})) {
          if (precision == "double")
            run<double>(args, sampler, kernel, precision, n);
          else
            run<float>(args, sampler, kernel, precision, n);
        }
  return 0;
}
