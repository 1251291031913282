// Batched Hermitian eigensolver benchmark (suite "eigh"): times batched_eigh (and the LAPACKE backend on
// host builds, the cuSOLVER backend on CUDA builds) on T Hamiltonians H(x) of a random Gaussian-Hermitian configuration
// (D = 3) at random points, and measures the machine's double GEMM rate (suite "gemm_peak") for the fraction-of-peak
// figure. GFLOP/s are counted as 36 N^3 real flops per matrix (the nominal cost of an eigendecomposition with vectors),
// whatever the algorithm does.
//
//   qgml_bench_eigh [--N 3 4 8 16 32 64] [--T 2500] [--precision double float]
//                   [--impl qgml qgml-serial qgml-packed lapacke cusolver qgml-warm qgml-team]
//                   [--repeats 5] [--warmup 1] [--chunk 25000] [--gemm 1] [--out FILE]
//                   [--cusolver-method auto|jacobi|heevd|syev] [--streams 4] [--shapes auto lanes8x16 team32]
//                   [--staging auto none scratch]
// (default --impl: qgml lapacke on host builds, qgml cusolver on CUDA builds). cusolver: batched Jacobi
// for N <= 32, heevd per matrix on --streams streams above; the solver (handles, workspace) is created
// once, outside the timed region. qgml-team runs once per --shapes entry (the team variant's TeamShape,
// bench_common.hpp's spelling; recorded as "team_shape") and --staging entry (EighOptions::staging;
// recorded as "staging").
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "qgml/common/random.hpp"
#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/model/hamiltonian.hpp"
#include "qgml/model/initializers.hpp"

#include "bench_common.hpp"
#ifdef QGML_BENCH_WITH_LAPACKE
#include "qgml/lapacke/batched_eigh.hpp"
#endif
#ifdef QGML_BENCH_WITH_CUSOLVER
#include "qgml/cusolver/batched_eigh.hpp"
#endif
#ifdef QGML_BENCH_WITH_CBLAS
#include <cblas.h>
#endif

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using qgml::bench::Args;
using qgml::bench::emit;

qgml::EighStaging parse_staging(const std::string& s) {
  if (s == "auto") return qgml::EighStaging::automatic;
  if (s == "none") return qgml::EighStaging::none;
  if (s == "scratch") return qgml::EighStaging::scratch;
  std::fprintf(stderr, "unknown --staging '%s' (auto, none, scratch)\n", s.c_str());
  std::exit(2);
}

template <class Real>
void run_eigh(const Args& args, const std::string& impl, const std::string& precision, int n, int count,
              const std::string& shape, const std::string& staging) {
  const Exec exec;
  const int d = 3;
  const int chunk = std::min(count, args.integer("chunk", 25000));
  auto config = qgml::gaussian_hermitian_configuration<Real>(d, n, 1.0, 7, exec);
  Kokkos::View<Real**, Kokkos::LayoutRight, Mem> points("qgml::bench::points", count, d);
  {
    auto hp = Kokkos::create_mirror_view(points);
    const qgml::CounterRng rng(11, 0);
    for (int t = 0; t < count; ++t)
      for (int k = 0; k < d; ++k) hp(t, k) = Real(2 * rng.uniform(std::uint64_t(t) * d + k) - 1);
    Kokkos::deep_copy(exec, points, hp);
    qgml::fence(exec, "qgml::bench::points");
  }
  qgml::MatrixStack<Real, Mem> h("qgml::bench::H", chunk, n, n), v("qgml::bench::V", chunk, n, n);
  qgml::RealMatrix<Real, Mem> w("qgml::bench::w", chunk, n);
  qgml::IntVector<Mem> info("qgml::bench::info", chunk);
  const int chunks = (count + chunk - 1) / chunk;
  qgml::MatrixStack<Real, Mem> v0;
  qgml::IntVector<Mem> sweeps("qgml::bench::sweeps", chunk);
  double sweep_sum = 0;
  // One timed unit = all T matrices; with chunking, H of a chunk is rebuilt (untimed) before its solve.
  double total_median = 0, total_min = 0;
  int failures = 0;
#ifdef QGML_BENCH_WITH_CUSOLVER
  std::unique_ptr<qgml::cusolver::BatchedEigh<Real>> cusolver_eigh;
#endif
  for (int c = 0; c < chunks; ++c) {
    const int begin = c * chunk, end = std::min(count, begin + chunk);
    const auto pts = Kokkos::subview(points, Kokkos::make_pair(begin, end), Kokkos::ALL);
    const auto hc = Kokkos::subview(h, Kokkos::make_pair(0, end - begin), Kokkos::ALL, Kokkos::ALL);
    const auto wc = Kokkos::subview(w, Kokkos::make_pair(0, end - begin), Kokkos::ALL);
    const auto vc = Kokkos::subview(v, Kokkos::make_pair(0, end - begin), Kokkos::ALL, Kokkos::ALL);
    const auto ic = Kokkos::subview(info, Kokkos::make_pair(0, end - begin));
    std::function<void()> setup = [&]() { qgml::build_hamiltonians(exec, config, pts, hc); };
    std::function<void()> body;
    if (impl == "qgml-warm") {
      // The training situation: the basis is the eigenvectors of a nearby H (points moved by 1e-3).
      Kokkos::View<Real**, Kokkos::LayoutRight, Mem> moved("qgml::bench::moved", end - begin, d);
      Kokkos::deep_copy(exec, moved, pts);
      Kokkos::parallel_for(
          "qgml::bench::move_points", Kokkos::RangePolicy<Exec>(exec, 0, (end - begin) * d),
          KOKKOS_LAMBDA(const int i) { moved(i / d, i % d) += Real(1e-3); });
      qgml::build_hamiltonians(exec, config, moved, hc);
      qgml::batched_eigh(exec, hc, wc, vc, ic);
      if (!v0.extent(0)) v0 = decltype(v0)("qgml::bench::V0", chunk, n, n);
      const auto v0c = Kokkos::subview(v0, Kokkos::make_pair(0, end - begin), Kokkos::ALL, Kokkos::ALL);
      Kokkos::deep_copy(exec, v0c, vc);
      setup = [&, v0c]() {
        qgml::build_hamiltonians(exec, config, pts, hc);
        Kokkos::deep_copy(exec, vc, v0c);
      };
      body = [&]() { qgml::batched_eigh(exec, hc, wc, vc, ic, {qgml::EighVariant::serial, 0, true}, sweeps); };
    } else if (impl == "qgml") {
      body = [&]() { qgml::batched_eigh(exec, hc, wc, vc, ic); };
    } else if (impl == "qgml-serial") {  // one thread per matrix (the automatic variant before packing)
      body = [&]() { qgml::batched_eigh(exec, hc, wc, vc, ic, {qgml::EighVariant::serial, 0}); };
    } else if (impl == "qgml-packed") {  // SIMD packs of matrices per thread (serial on devices)
      body = [&]() { qgml::batched_eigh(exec, hc, wc, vc, ic, {qgml::EighVariant::packed, 0}); };
    } else if (impl == "qgml-team") {  // in each TeamShape of --shapes
      qgml::EighOptions options;
      options.variant = qgml::EighVariant::team;
      options.team_shape = qgml::bench::parse_team_shape(shape);
      options.staging = parse_staging(staging);
      body = [&, options]() { qgml::batched_eigh(exec, hc, wc, vc, ic, options); };
#ifdef QGML_BENCH_WITH_LAPACKE
    } else if (impl == "lapacke") {
      if constexpr (qgml::is_host_space_v<Exec>) {
        body = [&]() { qgml::lapacke::batched_eigh(exec, hc, wc, vc, ic); };
      } else {
        std::fprintf(stderr, "the lapacke implementation runs on host execution spaces only\n");
        std::exit(2);
      }
#endif
    } else if (impl == "cusolver") {
#ifdef QGML_BENCH_WITH_CUSOLVER
      if (!cusolver_eigh) {
        qgml::cusolver::EighOptions options;
        const std::string method = args.string("cusolver-method", "auto");
        if (method == "jacobi") {
          options.method = qgml::cusolver::EighMethod::jacobi_batched;
        } else if (method == "heevd") {
          options.method = qgml::cusolver::EighMethod::heevd;
        } else if (method == "syev") {
          options.method = qgml::cusolver::EighMethod::syev_batched;
        } else if (method != "auto") {
          std::fprintf(stderr, "unknown --cusolver-method '%s' (auto, jacobi, heevd, syev)\n", method.c_str());
          std::exit(2);
        }
        options.streams = args.integer("streams", 4);
        cusolver_eigh = std::make_unique<qgml::cusolver::BatchedEigh<Real>>(n, chunk, options);
      }
      body = [&]() { cusolver_eigh->solve(exec, hc, wc, vc, ic); };
#else
      std::fprintf(stderr,
                   "the cusolver implementation needs a CUDA build with the cuSOLVER backend (qgml::cusolver)\n");
      std::exit(2);
#endif
    } else {
      std::fprintf(stderr, "unknown --impl '%s'\n", impl.c_str());
      std::exit(2);
    }
    const auto t = qgml::bench::time_runs(exec, args.integer("warmup", 1), args.integer("repeats", 5), setup, body);
    total_median += t.median;
    total_min += t.min;
    failures += qgml::count_eigh_failures(exec, ic);
    if (impl == "qgml-warm") {
      int total = 0;
      const auto sw = sweeps;
      Kokkos::parallel_reduce(
          "qgml::bench::sweeps", Kokkos::RangePolicy<Exec>(exec, 0, end - begin),
          KOKKOS_LAMBDA(const int t, int& s) { s += sw(t); }, total);
      sweep_sum += total;
    }
  }
  const double flops = 36.0 * double(n) * n * n * count;
  auto line = qgml::bench::context<Exec>("eigh", impl);
  line.add("N", n).add("T", count).add("precision", precision).add("repeats", args.integer("repeats", 5));
  line.add("chunk", chunk).add("median_s", total_median).add("min_s", total_min);
  line.add("gflops", flops / total_median * 1e-9).add("points_per_s", count / total_median);
  line.add("failures", failures);
  if (impl == "qgml-team")
    line.add("team_shape", shape)
        .add("staging", qgml::to_string(qgml::resolve_eigh_staging<Exec>(parse_staging(staging), n)));
  if (impl == "qgml-warm") line.add("mean_sweeps", sweep_sum / count);
#ifdef QGML_BENCH_WITH_CUSOLVER
  if (cusolver_eigh) {
    const auto method = cusolver_eigh->method();
    line.add("cusolver_method", method == qgml::cusolver::EighMethod::jacobi_batched ? "jacobi_batched"
                                : method == qgml::cusolver::EighMethod::heevd        ? "heevd"
                                                                                     : "syev_batched")
        .add("streams", cusolver_eigh->streams());
  }
#endif
  emit(line, args.string("out", ""));
}

#ifdef QGML_BENCH_WITH_CBLAS
// Double GEMM rate of the BLAS on this machine, with as many threads as the execution space.
void run_gemm_peak(const Args& args) {
  const int n = args.integer("gemm-size", 2048);
  const int threads = int(Exec().concurrency());
  openblas_set_num_threads(threads);
  std::vector<double> a(std::size_t(n) * n, 1.0), b(std::size_t(n) * n, 0.5), c(std::size_t(n) * n, 0.0);
  const Kokkos::Serial host;
  const auto t = qgml::bench::time_runs(
      host, 1, 3, []() {},
      [&]() {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(),
                    n);
      });
  auto line = qgml::bench::context<Exec>("gemm_peak", "openblas_dgemm");
  line.add("N", n).add("blas_threads", threads).add("median_s", t.median).add("min_s", t.min);
  line.add("gflops", 2.0 * n * double(n) * n / t.median * 1e-9);
  emit(line, args.string("out", ""));
  openblas_set_num_threads(1);
}
#endif

}  // namespace

#ifdef QGML_BENCH_WITH_CUSOLVER
const char* const default_vendor_impl = "cusolver";
#else
const char* const default_vendor_impl = "lapacke";
#endif

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  const Args args(argc, argv);
#ifdef QGML_BENCH_WITH_CBLAS
  if (args.integer("gemm", 1)) run_gemm_peak(args);
#endif
  for (const auto& precision : args.strings("precision", {"double", "float"}))
    for (int count : args.ints("T", {2500}))
      for (int n : args.ints("N", {3, 4, 8, 16, 32, 64}))
        for (const auto& impl : args.strings("impl", {"qgml", default_vendor_impl}))
          for (const auto& shape :
               impl == "qgml-team" ? args.strings("shapes", {"auto"}) : std::vector<std::string>{"auto"})
            for (const auto& staging :
                 impl == "qgml-team" ? args.strings("staging", {"auto"}) : std::vector<std::string>{"auto"}) {
              if (precision == "double")
                run_eigh<double>(args, impl, precision, n, count, shape, staging);
              else
                run_eigh<float>(args, impl, precision, n, count, shape, staging);
            }
  return 0;
}
