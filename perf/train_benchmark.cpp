// Training-epoch benchmark (suite "train_epoch"): one epoch of mini-batch training (shuffle, H(x),
// eigendecomposition, exact gradient, Adam) on T points of the unit sphere in R^D, the problem the
// PyTorch baseline perf/baselines/torch_train_epoch.py solves. Each timed unit is one Trainer epoch,
// including its single device-to-host copy.
//
//   qgml_bench_train [--N 3 4 8 16 32 64] [--batch 256 2500] [--w 0 0.25] [--precision double float]
//                    [--T 2500] [--D 3] [--lr 0.01] [--repeats 5] [--warmup 2] [--out FILE]
//                    [--impl qgml qgml-double qgml-narrow qgml-spectrum qgml-team qgml-separate qgml-warm]
//   qgml: the default (on CPUs the fused loss-gradient kernel per pack of points where it applies, with
//         psi_0 and phi from tridiagonal solves; in double from N = 64 the reduction in single precision
//         and the ground state refined in double, ground_state/ground_state_mixed.hpp);
//   qgml-double: qgml with the reduction in double (TrainingSettings::mixed_precision_reduction off);
//   qgml-narrow: qgml in packs of 8 doubles (TrainingSettings::wide_packs off);
//   qgml-spectrum: the fused kernel with the whole eigendecomposition;
//   qgml-team: the team kernel, one team per point on the ground-state path (the GPU kernel), and the GEMM;
//   qgml-separate: the separate batch kernels (build H, eigensolve, per-point terms, the GEMM);
//   qgml-warm: warm-started eigensolves, with the mean Jacobi sweeps per point of every epoch.
//   --shapes auto lanes8 lanes4x32 team32 ... (the team kernel's TeamShape, bench_common.hpp; recorded as
//   "team_shape"): one run per shape, default auto.
//   --penalty frobenius|frobenius_squared [--penalty-weight 0.01]: train with the commutator penalty
//   (docs/math.md 4.8; recorded as "penalty" and "penalty_weight"). Default: none.
//   --stream own (CUDA): train on an execution-space instance with a stream of its own, as an embedding
//   code would; the batch gradient's product is then the fixed-order chunked reduction (KokkosKernels
//   3.4's gemm runs on the default instance only). Default: the default instance.
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "qgml/data/datasets.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/train/trainer.hpp"

#include "bench_common.hpp"

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using qgml::bench::Args;

template <class Real>
void run_on(const Args& args, const Exec& exec, const std::string& precision, int n, int batch, double w,
            const std::string& impl, const std::string& shape) {
  const bool warm = impl == "qgml-warm";
  const int count = args.integer("T", 2500), d = args.integer("D", 3);
  const int warmup = args.integer("warmup", 2), repeats = args.integer("repeats", 5);
  auto data = qgml::sphere_points<Real>(exec, count, d, 0.0, 42);
  auto config = qgml::qr_configuration<Real>(d, n, 1, exec);
  qgml::TrainingSettings s;
  s.epochs = warmup + repeats;
  s.batch_size = batch;
  s.learning_rate = std::stod(args.string("lr", "0.01"));
  s.loss.w = w;
  s.seed = 3;
  s.loss.penalty = qgml::parse_penalty_kind(args.string("penalty", "none"));
  s.loss.penalty_weight = args.real("penalty-weight", 0.01);
  s.warm_start_eigh = warm;
  s.kernel = impl == "qgml-team" ? qgml::LossKernel::team
             : (impl == "qgml" || impl == "qgml-double" || impl == "qgml-narrow" || impl == "qgml-spectrum")
                 ? qgml::LossKernel::automatic
                 : qgml::LossKernel::separate;
  s.ground_state_path = impl == "qgml" || impl == "qgml-double" || impl == "qgml-narrow";
  s.mixed_precision_reduction = impl != "qgml-double";
  s.wide_packs = impl != "qgml-narrow";
  s.team_shape = qgml::bench::parse_team_shape(shape);
  qgml::Trainer<Real, Exec> trainer(config, data, s, exec);
  double final_loss = 0;
  std::string sweeps;
  const auto t = qgml::bench::time_runs(
      exec, warmup, repeats, []() {},
      [&]() {
        const auto r = trainer.train_epoch();
        final_loss = r.total;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.3g", sweeps.empty() ? "" : " ", r.eigh_sweeps);
        sweeps += buf;
      });
  auto line = qgml::bench::context<Exec>("train_epoch", impl);
  line.add("N", n).add("D", d).add("T", count).add("batch", std::min(batch, count)).add("w", w);
  line.add("precision", precision).add("repeats", repeats).add("median_s", t.median).add("min_s", t.min);
  line.add("points_per_s", count / t.median).add("final_loss", final_loss);
  line.add("penalty", qgml::to_string(s.loss.penalty)).add("penalty_weight", s.loss.penalty_weight);
  line.add("stream", args.string("stream", "default")).add("team_shape", shape);
  line.add("lanes_min_blocks", qgml::team_shape_min_blocks);  // compile-time (QGML_LANES_MIN_BLOCKS)
  line.add("bytes_per_point", double(trainer.bytes()) / std::min(batch, count));
  if (warm) line.add("mean_sweeps_per_epoch", sweeps);  // warm-up epochs first; the first epoch is cold
  qgml::bench::emit(line, args.string("out", ""));
}

template <class Real>
void run(const Args& args, const std::string& precision, int n, int batch, double w, const std::string& impl,
         const std::string& shape) {
#if defined(KOKKOS_ENABLE_CUDA)
  cudaStream_t stream = nullptr;
  if (args.string("stream", "default") == "own") cudaStreamCreate(&stream);
  const Exec exec = stream ? Exec(stream) : Exec();
#else
  const Exec exec;
#endif
  run_on<Real>(args, exec, precision, n, batch, w, impl, shape);
#if defined(KOKKOS_ENABLE_CUDA)
  if (stream) cudaStreamDestroy(stream);
#endif
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  const Args args(argc, argv);
  for (const auto& precision : args.strings("precision", {"double", "float"}))
    for (int n : args.ints("N", {3, 4, 8, 16, 32, 64}))
      for (int batch : args.ints("batch", {256, 2500}))
        for (const auto& ws : args.strings("w", {"0", "0.25"})) {
          const double w = std::stod(ws);
          for (const auto& impl : args.strings("impl", {"qgml"})) {
            if (impl != "qgml" && impl != "qgml-double" && impl != "qgml-narrow" && impl != "qgml-spectrum" &&
                impl != "qgml-team" && impl != "qgml-separate" && impl != "qgml-warm") {
              std::fprintf(stderr,
                           "qgml_bench_train: --impl takes qgml, qgml-double, qgml-narrow, qgml-spectrum, qgml-team, "
                           "qgml-separate and qgml-warm, not '%s'\n",
                           impl.c_str());
              std::exit(2);
            }
            for (const auto& shape : args.strings("shapes", {"auto"})) {
              if (precision == "double")
                run<double>(args, precision, n, batch, w, impl, shape);
              else
                run<float>(args, precision, n, batch, w, impl, shape);
            }
          }
        }
  return 0;
}
