// Training-epoch benchmark (suite "train_epoch"): one epoch of mini-batch training (shuffle, H(x),
// eigendecomposition, exact gradient, Adam) on T points of the unit sphere in R^D, the problem the
// PyTorch baseline perf/baselines/torch_train_epoch.py solves. Each timed unit is one Trainer epoch,
// including its single device-to-host copy.
//
//   qgml_bench_train [--N 3 4 8 16 32 64] [--batch 256 2500] [--w 0 0.25] [--precision double float]
//                    [--T 2500] [--D 3] [--lr 0.01] [--repeats 5] [--warmup 2] [--out FILE]
#include <Kokkos_Core.hpp>

#include <string>

#include "qgml/datasets.hpp"
#include "qgml/initializers.hpp"
#include "qgml/trainer.hpp"

#include "bench_common.hpp"

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using qgml::bench::Args;

template <class Real>
void run(const Args& args, const std::string& precision, int n, int batch, double w) {
  const Exec exec;
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
  qgml::Trainer<Real, Exec> trainer(config, data, s, exec);
  double final_loss = 0;
  const auto t = qgml::bench::time_runs(
      exec, warmup, repeats, []() {}, [&]() { final_loss = trainer.train_epoch().total; });
  auto line = qgml::bench::context<Exec>("train_epoch", "qgml");
  line.add("N", n).add("D", d).add("T", count).add("batch", std::min(batch, count)).add("w", w);
  line.add("precision", precision).add("repeats", repeats).add("median_s", t.median).add("min_s", t.min);
  line.add("points_per_s", count / t.median).add("final_loss", final_loss);
  line.add("bytes_per_point", double(trainer.bytes()) / std::min(batch, count));
  qgml::bench::emit(line, args.string("out", ""));
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
          if (precision == "double")
            run<double>(args, precision, n, batch, w);
          else
            run<float>(args, precision, n, batch, w);
        }
  return 0;
}
