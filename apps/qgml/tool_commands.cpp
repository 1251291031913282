// qgml estimate, qgml eval, qgml info and qgml fuzzy-sphere.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>

#include "qgml/common/file_error.hpp"
#include "qgml/common/random.hpp"
#include "qgml/data/datasets.hpp"
#include "qgml/io/atomic_file.hpp"
#include "qgml/io/configuration_io.hpp"
#include "qgml/io/data_io.hpp"
#include "qgml/io/npy.hpp"
#include "qgml/io/parse_number.hpp"
#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/model/hamiltonian.hpp"
#include "qgml/model/observables.hpp"
#include "qgml/train/evaluate.hpp"
#include "qgml/version.hpp"

#include "analysis/analysis.hpp"
#include "commands.hpp"
#include "common/format.hpp"
#include "common/json_file.hpp"
#include "run/parallel.hpp"
#include "run/run_directory.hpp"
#include "settings/config.hpp"

namespace qgml::app {

namespace fs = std::filesystem;
using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;

namespace {

// --name value or --name=value options; every option must be known.
std::map<std::string, std::string> options(const std::vector<std::string>& args,
                                           const std::map<std::string, std::string>& defaults, const char* command) {
  std::map<std::string, std::string> o = defaults;
  const std::string context = std::string("qgml ") + command + ": ";
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) throw Error(context + "unexpected argument '" + a + "'");
    const auto [key, value] = take_option(args, i, context);
    if (!o.count(key)) {
      std::string known;
      for (const auto& [k, v] : defaults) known += " --" + k;
      throw Error(context + "unknown option --" + key + " (options:" + known + ")");
    }
    o[key] = value;
  }
  for (const auto& [k, v] : o)
    if (v.empty() && (k == "matrices" || k == "data")) throw Error(context + "--" + k + " is required");
  return o;
}

// The option --key read as the setting `setting` (same parser, range and message as in a config file).
double number(const std::map<std::string, std::string>& o, const std::string& key, const std::string& setting) {
  const std::string& text = o.at(key);
  const std::string problem = setting_problem(setting, text);
  if (!problem.empty()) throw Error("--" + key + " = '" + text + "': " + problem);
  double v = 0;
  parse_real(text, v);
  return v;
}

// The option --key as an integer in [lo, hi].
long integer(const std::map<std::string, std::string>& o, const std::string& key, long lo, long hi) {
  const std::string& text = o.at(key);
  long long v = 0;
  if (!parse_integer(text, v) || v < lo || v > hi)
    throw Error("--" + key + " = '" + text + "': expected an integer in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  return long(v);
}

template <class Real>
struct Loaded {
  MatrixConfiguration<Real, Exec> config;
  RealMatrix<Real, Mem> data;
};

template <class Real>
Loaded<Real> load_inputs(const Exec& exec, const std::string& matrices, const std::string& data_path) {
  const HostMatrices m = load_matrices(matrices);
  const HostData data = read_points(data_path);
  if (data.cols != m.D)
    throw Error("the data '" + data_path + "' have D = " + std::to_string(data.cols) +
                " coordinates but the configuration '" + matrices + "' has D = " + std::to_string(m.D) + " matrices");
  return {to_configuration<Real>(m, exec), to_device_points<Real>(exec, data)};
}

void prepare_output(const std::string& out) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw FileError("output directory '" + out + "': cannot create: " + ec.message());
  check_writable_directory(out);
}

// With MPI, each rank reads its shard of the points and analyses it; rank 0 writes and prints.
template <class Real>
int estimate(const std::map<std::string, std::string>& o) {
  const Exec exec;
  Communicator& comm = communicator();
  Loaded<Real> in;
  GeometrySettings s;
  int chunk = 0;
  run_collectively(comm, [&] {
    s = geometry_settings(o.at("metric"), number(o, "min-gap-ratio", "analysis.min_gap_ratio"),
                          number(o, "noise-floor", "analysis.noise_floor"),
                          number(o, "first-gap-exponent", "analysis.first_gap_exponent"));
    if (const std::string problem = setting_problem("analysis.kernel", o.at("kernel")); !problem.empty())
      throw Error("--kernel = '" + o.at("kernel") + "': " + problem);
    s.kernel = parse_geometry_kernel(o.at("kernel"));
    chunk = int(number(o, "chunk", "analysis.chunk"));
    s.spread.scales = parse_spread_scales(o.at("scales"));
    const HostMatrices m = load_matrices(o.at("matrices"));
    const HostShard shard = read_points_shard(o.at("data"), comm.rank(), comm.size());
    if (shard.data.cols != m.D)
      throw Error("the data '" + o.at("data") + "' have D = " + std::to_string(shard.data.cols) +
                  " coordinates but the configuration '" + o.at("matrices") + "' has D = " + std::to_string(m.D) +
                  " matrices");
    if (shard.data.rows == 0)
      throw Error("the data '" + o.at("data") + "' have " + std::to_string(shard.total) + " points, too few for " +
                  std::to_string(comm.size()) + " ranks");
    // H(x) = 1/2 sum_k (A_k - x_k)^2 (docs/math.md 2.1) has a usable ground state only where its entries, of
    // order |A|^2 + |x|^2, are finite and the A-dependent part, of order |A| |x|, is not lost to rounding
    // against |x|^2 (|A| >= eps |x|); otherwise every eigenvalue rounds to the same number and the
    // "geometry" is that of rounding. No such point at all: an error, not a dimension of 0.
    double a = 0;
    for (const auto& z : m.values) a = std::max(a, std::abs(z));
    const double eps = std::numeric_limits<Real>::epsilon();
    const double big = std::sqrt(double(std::numeric_limits<Real>::max()) / (4.0 * m.D * m.N));
    long usable = 0;
    for (long i = 0; i < long(shard.data.rows); ++i) {
      double x = 0;
      for (long k = 0; k < long(shard.data.cols); ++k)
        x = std::max(x, std::abs(shard.data.values[std::size_t(i * shard.data.cols + k)]));
      usable += a > 0 && a < big && x < big && a >= eps * x ? 1 : 0;
    }
    if (usable == 0)
      throw Error(
          format("no point has a finite ground state: the data '%s' (%zu points) and "
                 "the matrices '%s' (largest entry %.3g) are of too different or extreme scales for "
                 "H(x) = 1/2 sum_k (A_k - x_k)^2 in %s precision; standardise the data or rescale the matrices",
                 o.at("data").c_str(), std::size_t(shard.data.rows), o.at("matrices").c_str(), a,
                 std::is_same_v<Real, float> ? "single" : "double"));
    // The analysis's scratch and buffers, checked before the data go to the device (one rule with train's).
    AnalysisPreflight p;
    p.what = "qgml estimate's dimension analysis";
    p.refusal = "refused before the analysis starts";
    p.kernel_setting = "--kernel";
    p.chunk_setting = "--chunk";
    p.beside = "data and matrices";
    const double data_bytes = double(shard.data.values.size()) * (sizeof(double) + sizeof(Real)),
                 matrix_bytes = double(m.D + 1) * m.N * m.N * sizeof(complex_t<Real>);
    check_analysis_needs<Real, Exec>(s, chunk, std::int64_t(shard.data.rows), comm.rank() == 0 ? shard.total : 0,
                                     int(m.D), int(m.N), data_bytes + matrix_bytes, memory_budget(exec), p);
    in = {to_configuration<Real>(m, exec), to_device_points<Real>(exec, shard.data)};
    if (comm.rank() == 0) prepare_output(o.at("out"));
  });
  const DimensionAnalysis analysis = analyze_dimension(exec, in.config, in.data, s, chunk, comm);
  write_analysis(analysis, o.at("out"), comm,
                 JsonFields()
                     .add("min_gap_ratio", s.estimator.min_gap_ratio)
                     .add("noise_floor", s.estimator.noise_floor)
                     .add("first_gap_exponent", s.estimator.first_gap_exponent));
  const DimensionSummary& sum = analysis.summary;
  // Every rank holds the summary of all points: all ranks fail alike.
  if (sum.points == 0)
    throw Error("no point has a finite estimate (all " + std::to_string(analysis.failed_points) +
                " points failed): the data or the matrices are likely of an extreme scale (standardise the data "
                "or rescale the matrices); per-point results in " +
                o.at("out") + "/per_point.csv");
  if (comm.rank() != 0) return 0;
  std::printf("%ld points, D = %d, N = %d, %s metric\n", sum.points, in.config.dimension(), in.config.matrix_size(),
              o.at("metric").c_str());
  for (const std::string& line : summary_lines(sum)) std::printf("%s\n", line.c_str());
  std::printf("estimated intrinsic dimension: %d%s\n", sum.mode, sum.uncertain ? " (uncertain)" : "");
  std::printf("outputs: %s/per_point.csv, %s/dimension_summary.json\n", o.at("out").c_str(), o.at("out").c_str());
  return 0;
}

template <class Real>
int eval(const std::map<std::string, std::string>& o) {
  const Exec exec;
  LossSettings s;  // the options first: a bad one is reported before any file is read
  s.w = number(o, "w", "training.w");
  s.penalty = parse_penalty_kind(o.at("penalty"));
  s.penalty_weight = number(o, "penalty-weight", "training.penalty_weight");
  auto in = load_inputs<Real>(exec, o.at("matrices"), o.at("data"));
  prepare_output(o.at("out"));
  const auto e = evaluate(exec, in.config, in.data, s);
  const int t = int(in.data.extent(0)), d = in.config.dimension(), n = in.config.matrix_size();
  if (!std::isfinite(e.loss))
    throw Error(
        format("qgml eval: the loss is not finite (%s; the eigensolve failed at %ld of %d points): the "
               "matrices or the points are likely of an extreme scale",
               std::to_string(e.loss).c_str(), long(e.eigh_failures), t));
  auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.gradient);
  auto xbar = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.xbar);
  auto sigma2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.sigma2);
  auto energy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.energy);
  const std::string out = o.at("out");
  // NPY files in double whatever the precision, for cross-checks.
  std::vector<std::complex<double>> gd(g.span());
  for (std::size_t i = 0; i < g.span(); ++i) gd[i] = {g.data()[i].real(), g.data()[i].imag()};
  write_npy(out + "/gradient.npy", NpyType::complex128, {std::size_t(d), std::size_t(n), std::size_t(n)}, gd.data());
  std::vector<double> xd(xbar.data(), xbar.data() + xbar.span()), sd(sigma2.data(), sigma2.data() + t),
      ed(energy.data(), energy.data() + t);
  write_npy(out + "/xbar.npy", NpyType::float64, {std::size_t(t), std::size_t(d)}, xd.data());
  write_npy(out + "/sigma2.npy", NpyType::float64, {std::size_t(t)}, sd.data());
  write_npy(out + "/energy.npy", NpyType::float64, {std::size_t(t)}, ed.data());
  std::ostringstream csv;
  csv.precision(17);
  for (int k = 0; k < d; ++k) csv << "xbar" << k << ",";
  csv << "sigma2,energy\n";
  for (int i = 0; i < t; ++i) {
    for (int k = 0; k < d; ++k) csv << xbar(i, k) << ",";
    csv << sigma2(i) << "," << energy(i) << "\n";
  }
  write_file_atomically(out + "/per_point.csv", csv.str());
  write_json_file(out + "/loss.json", {{"loss", e.loss},
                                       {"reconstruction", e.reconstruction},
                                       {"fluctuation", e.fluctuation},
                                       {"penalty", e.penalty},
                                       {"w", s.w},
                                       {"points", t},
                                       {"degenerate_points", e.degenerate_points},
                                       {"eigh_failures", e.eigh_failures}});
  std::printf("loss %.12g (reconstruction %.12g, fluctuation %.12g, penalty %.6g) over %d points\n", e.loss,
              e.reconstruction, e.fluctuation, e.penalty, t);
  std::printf("outputs: %s/{loss.json, gradient.npy, xbar.npy, sigma2.npy, energy.npy, per_point.csv}\n", out.c_str());
  return 0;
}

}  // namespace

int estimate_command(const std::vector<std::string>& args) {
  const auto o = options(args,
                         {{"matrices", ""},
                          {"data", ""},
                          {"metric", "quantum"},
                          {"min-gap-ratio", schema_default("analysis.min_gap_ratio")},
                          {"noise-floor", schema_default("analysis.noise_floor")},
                          {"first-gap-exponent", schema_default("analysis.first_gap_exponent")},
                          {"kernel", schema_default("analysis.kernel")},
                          {"chunk", schema_default("analysis.chunk")},
                          {"scales", schema_default("analysis.spread_scales")},
                          {"out", "estimate-output"},
                          {"precision", "double"}},
                         "estimate");
  if (o.at("precision") == "float") return estimate<float>(o);
  if (o.at("precision") != "double") throw Error("--precision must be double or float");
  return estimate<double>(o);
}

int eval_command(const std::vector<std::string>& args) {
  const auto o = options(args,
                         {{"matrices", ""},
                          {"data", ""},
                          {"w", schema_default("training.w")},
                          {"penalty", "none"},
                          {"penalty-weight", "0"},
                          {"out", "eval-output"},
                          {"precision", "double"}},
                         "eval");
  if (o.at("precision") == "float") return eval<float>(o);
  if (o.at("precision") != "double") throw Error("--precision must be double or float");
  return eval<double>(o);
}

int info_command() {
  std::printf("qgml %s\n", QGML_VERSION_STRING);
  std::printf("Kokkos %d.%d.%d\n", KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100);
  std::printf("enabled backends:");
#ifdef KOKKOS_ENABLE_SERIAL
  std::printf(" Serial");
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  std::printf(" OpenMP");
#endif
#ifdef KOKKOS_ENABLE_CUDA
  std::printf(" Cuda");
#endif
  std::printf("\nexecution space: %s, concurrency %d\n", Exec::name(), int(Exec().concurrency()));
  std::printf("precision: double (default), float (model.precision: float)\n");
  std::printf("eigensolver: qgml Householder + implicit QL (serial, team and packed SIMD variants)%s\n",
              QGML_HAVE_LAPACKE ? "; host LAPACKE zheevd/cheevd backend (OpenBLAS) available" : "");
  std::printf("training on %s: %s\n", Exec::name(),
              is_host_space_v<Exec> ? "fused loss-gradient kernel per pack of points for 2 <= N <= 256 (ground state "
                                      "and reduced-resolvent solves from N = 5), separate kernels otherwise"
                                    : "separate batch kernels (H, eigensolve, per-point terms, product over points)");
  return 0;
}

// Evaluates the fuzzy sphere A_k = J_k / j on T points of the unit sphere (docs/math.md 7) and compares the
// observables with their closed forms.
int fuzzy_sphere_command(const std::vector<std::string>& args) {
  const auto o = options(args, {{"N", "3"}, {"T", "2500"}}, "fuzzy-sphere");
  const int n = int(integer(o, "N", 2, 4096)), count = int(integer(o, "T", 1, 1000000000));
  const Exec exec;
  const double j = 0.5 * (n - 1), c = 1.0 / j;
  auto config = fuzzy_sphere_configuration<double>(n, c, exec);
  auto points = sphere_points<double>(exec, count, 3, 0.0, 2024);
  MatrixStack<double, Mem> h("qgml::app::H", count, n, n), v("qgml::app::V", count, n, n);
  RealMatrix<double, Mem> w("qgml::app::w", count, n);
  IntVector<Mem> info("qgml::app::info", count);
  GroundStateObservables<double, Mem> obs(count, 3);
  Kokkos::Timer timer;
  build_hamiltonians(exec, config, points, h);
  batched_eigh(exec, h, w, v, info);
  compute_ground_state_observables(exec, config, points, w, v, obs);
  fence(exec, "qgml::app::fuzzy_sphere");
  const double seconds = timer.seconds();
  auto xbar = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obs.xbar);
  auto sigma2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obs.sigma2);
  auto wh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
  double err_xbar = 0, err_sigma = 0, err_gap = 0;
  for (int t = 0; t < count; ++t) {
    double r = 0;
    for (int k = 0; k < 3; ++k) r += xbar(t, k) * xbar(t, k);
    err_xbar = std::max(err_xbar, std::abs(std::sqrt(r) - c * j));
    err_sigma = std::max(err_sigma, std::abs(sigma2(t) - c * c * j));
    for (int m = 0; m + 1 < n; ++m) err_gap = std::max(err_gap, std::abs(wh(t, m + 1) - wh(t, m) - c));
  }
  std::printf("fuzzy sphere N = %d (spin j = %g, c = 1/j), %d points on the unit sphere, %s\n", n, j, count,
              Exec::name());
  std::printf("  H, eigendecomposition and observables: %.3f ms (%d solver failures)\n", 1e3 * seconds,
              count_eigh_failures(exec, info));
  std::printf("  |xbar|  = c j   = %.6f   max deviation %.2e\n", c * j, err_xbar);
  std::printf("  sigma^2 = c^2 j = %.6f   max deviation %.2e\n", c * c * j, err_sigma);
  std::printf("  gaps    = c |x| = %.6f   max deviation %.2e\n", c, err_gap);
  const bool ok = err_xbar < 1e-10 && err_sigma < 1e-10 && err_gap < 1e-10;
  std::printf("  %s\n", ok ? "closed forms reproduced" : "MISMATCH with the closed forms");
  return ok ? 0 : 1;
}

}  // namespace qgml::app
