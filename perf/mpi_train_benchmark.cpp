// Data-parallel training benchmark (suite "train_epoch_mpi"): one Trainer epoch on T points of the unit
// sphere spread over the MPI ranks (strong scaling: T fixed; weak scaling: --weak, T per rank), with
// the time spent in the gradient all-reduces reported separately. Per optimisation step every rank
// all-reduces 2 D N^2 + 8 doubles (the complex gradient and the loss sums). Rank 0 prints.
//
//   mpirun -np R qgml_bench_train_mpi [--N 32] [--T 100000] [--batch 0] [--weak] [--precision double]
//                                     [--repeats 5] [--warmup 1] [--gpu-aware] [--out FILE]
// --gpu-aware hands device pointers to MPI_Allreduce (CUDA-aware MPI); otherwise through host mirrors.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <string>

#include "qgml/data/datasets.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/mpi/communicator.hpp"
#include "qgml/train/trainer.hpp"

#include "bench_common.hpp"

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using qgml::bench::Args;

template <class Real>
void run(qgml::mpi::Communicator& comm, const Args& args, const std::string& precision, int n, int per) {
  const Exec exec;
  const bool weak = args.has("weak");
  const long total = weak ? long(per) * comm.size() : per;
  const int d = args.integer("D", 3), batch = args.integer("batch", 0);
  const int warmup = args.integer("warmup", 1), repeats = args.integer("repeats", 5);
  const auto shard = qgml::shard_range(total, comm.size(), comm.rank());
  auto data = qgml::sphere_points<Real>(exec, int(shard.size()), d, 0.0, 42, shard.begin);
  auto config = qgml::qr_configuration<Real>(d, n, 1, exec);
  qgml::TrainingSettings s;
  s.epochs = warmup + repeats;
  s.batch_size = batch;
  s.learning_rate = 0.01;
  s.loss.w = 0.25;
  s.seed = 3;
  qgml::Trainer<Real, Exec> trainer(config, data, s, exec, comm, total);
  std::vector<double> epoch_s, comm_s;
  for (int e = 0; e < warmup + repeats; ++e) {
    const double c0 = trainer.communication_seconds();
    const auto r = trainer.train_epoch();
    // the slowest rank's times
    double t[2] = {r.seconds, trainer.communication_seconds() - c0};
    std::int64_t ns[2] = {std::int64_t(t[0] * 1e9), std::int64_t(t[1] * 1e9)};
    comm.allreduce_max(ns, 2);
    if (e >= warmup) {
      epoch_s.push_back(ns[0] * 1e-9);
      comm_s.push_back(ns[1] * 1e-9);
    }
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size();
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
  };
  const int b = batch <= 0 || batch > total ? int(total) : batch;
  const long steps = (total + b - 1) / b;
  if (comm.rank() != 0) return;
  auto line = qgml::bench::context<Exec>("train_epoch_mpi", "qgml");
  line.add("ranks", comm.size()).add("scaling", weak ? "weak" : "strong");
  line.add("device_buffers", comm.accepts_device_memory() ? "direct" : "host_mirror");
  line.add("N", n).add("D", d).add("T", total).add("batch", b).add("w", 0.25);
  line.add("precision", precision).add("repeats", repeats);
  line.add("median_s", median(epoch_s)).add("min_s", *std::min_element(epoch_s.begin(), epoch_s.end()));
  line.add("comm_median_s", median(comm_s));
  line.add("comm_fraction", median(comm_s) / median(epoch_s));
  line.add("allreduce_per_epoch", steps).add("bytes_per_allreduce", long(trainer.bytes_per_allreduce()));
  line.add("points_per_s", total / median(epoch_s));
  qgml::bench::emit(line, args.string("out", ""));
}

}  // namespace

int main(int argc, char* argv[]) {
  qgml::mpi::Environment mpi(argc, argv);
  {
    Kokkos::ScopeGuard guard(argc, argv);
    const Args args(argc, argv);
    constexpr bool device_is_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Exec::memory_space>::accessible;
    qgml::mpi::Communicator comm(
        MPI_COMM_WORLD,
        args.has("gpu-aware") ? qgml::mpi::DeviceBuffers::gpu_aware : qgml::mpi::DeviceBuffers::host_mirror,
        device_is_host);
    for (const auto& precision : args.strings("precision", {"double"}))
      for (int n : args.ints("N", {32}))
        for (int t : args.ints("T", {100000})) {
          if (precision == "double")
            run<double>(comm, args, precision, n, t);
          else
            run<float>(comm, args, precision, n, t);
        }
  }
  return 0;
}
