// Per-step products benchmark (suite "configuration_products"): the N x N x N products of a matrix
// configuration that training forms once per optimiser step, by qgml's kernels (one thread per entry)
// and by KokkosBlas::gemm (linalg/blas_gemm.hpp):
//   square_sum: S = 1/2 sum_k A_k^2 (model/matrix_configuration.hpp), 8 D N^3 flops nominal (the kernel
//               forms the lower triangle only, half of them);
//   penalty:    the commutator penalty's value and gradient (train/commutator_penalty.hpp), Frobenius
//               norm, 8 N^3 (2 P + 2 D (D - 1)) flops nominal with P = D (D - 1) / 2 pairs.
//
//   qgml_bench_products [--N 8 16 32 64 128 256] [--D 3] [--precision double float] [--op square_sum penalty]
//                       [--repeats 5] [--warmup 1] [--out FILE]
// Each timed unit is enough calls to take ~20 ms (at least one); median_s and min_s are per call.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "qgml/model/initializers.hpp"
#include "qgml/train/commutator_penalty.hpp"

#include "bench_common.hpp"

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using qgml::bench::Args;

template <class Real>
void run(const Args& args, const std::string& precision, int n, const std::string& op, bool use_gemm) {
  const Exec exec;
  const int d = args.integer("D", 3);
  const int warmup = args.integer("warmup", 1), repeats = args.integer("repeats", 5);
  using memory_space = Exec::memory_space;
  const auto config = qgml::gaussian_hermitian_configuration<Real>(d, n, 0.5, 3, exec);
  qgml::Matrix<Real, memory_space> s("qgml::bench::S", n, n);
  qgml::MatrixStack<Real, memory_space> gradient("qgml::bench::gradient", d, n, n);
  Kokkos::View<double, memory_space> value("qgml::bench::value");
  const qgml::CommutatorPenalty<Real, Exec> penalty(d, n);
  const auto call = [&]() {
    if (op == "square_sum")
      qgml::detail::compute_square_sum<Real>(exec, config.matrices(), s, use_gemm);
    else
      penalty.add(exec, config, qgml::PenaltyKind::frobenius, Real(0.01), gradient, value, use_gemm);
  };
  // Calls per timed unit: ~20 ms from the fastest of three timed calls.
  call();
  double one = 1e30;
  for (int c = 0; c < 3; ++c) {
    qgml::fence(exec, "qgml::bench::calibrate");
    Kokkos::Timer timer;
    call();
    qgml::fence(exec, "qgml::bench::calibrate");
    one = std::min(one, timer.seconds());
  }
  const int calls = one > 0.02 ? 1 : int(0.02 / (one > 1e-7 ? one : 1e-7)) + 1;
  const auto t = qgml::bench::time_runs(
      exec, warmup, repeats, []() {},
      [&]() {
        for (int c = 0; c < calls; ++c) call();
      });
  const double pairs = 0.5 * d * (d - 1);
  const double flops = 8.0 * n * n * double(n) * (op == "square_sum" ? d : 2 * pairs + 2.0 * d * (d - 1));
  auto line = qgml::bench::context<Exec>("configuration_products", use_gemm ? "gemm" : "kernel");
  line.add("op", op).add("N", n).add("D", d).add("precision", precision).add("repeats", repeats);
  line.add("calls_per_run", calls).add("median_s", t.median / calls).add("min_s", t.min / calls);
  line.add("flops_nominal", flops).add("gflops", flops / (t.median / calls) * 1e-9);
  line.add("automatic", qgml::detail::configuration_products_use_gemm(exec, n) == use_gemm);
  qgml::bench::emit(line, args.string("out", ""));
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  const Args args(argc, argv);
  for (const auto& precision : args.strings("precision", {"double", "float"}))
    for (int n : args.ints("N", {8, 16, 32, 64, 128, 256}))
      for (const auto& op : args.strings("op", {"square_sum", "penalty"})) {
        if (op != "square_sum" && op != "penalty") {
          std::fprintf(stderr, "qgml_bench_products: --op takes square_sum and penalty, not '%s'\n", op.c_str());
          std::exit(2);
        }
        for (bool use_gemm : {false, true}) {
          if (use_gemm && !qgml::detail::blas_gemm_usable(Exec(), (long long)n * n)) continue;
          if (precision == "double")
            run<double>(args, precision, n, op, use_gemm);
          else
            run<float>(args, precision, n, op, use_gemm);
        }
      }
  return 0;
}
