// qgml estimate and qgml eval (their options and reports; the work is the driver's estimate_from_files and
// evaluate_files), qgml info and qgml fuzzy-sphere.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/data/datasets.hpp"
#include "qgml/io/parse_number.hpp"
#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/model/hamiltonian.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/model/observables.hpp"
#include "qgml/plan/kernel_plan.hpp"
#include "qgml/version.hpp"

#include "analysis/analysis.hpp"
#include "commands.hpp"
#include "estimate/estimate_from_files.hpp"
#include "evaluate/evaluate_files.hpp"
#include "settings/config.hpp"
#include "settings/run_settings.hpp"

namespace qgml::app {

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

// The short options of qgml estimate and the analysis settings they stand for.
const std::vector<std::pair<std::string, std::string>>& estimate_short_options() {
  static const std::vector<std::pair<std::string, std::string>> o = {
      {"metric", "analysis.metric"},           {"min-gap-ratio", "analysis.min_gap_ratio"},
      {"noise-floor", "analysis.noise_floor"}, {"first-gap-exponent", "analysis.first_gap_exponent"},
      {"kernel", "analysis.kernel"},           {"chunk", "analysis.chunk"},
      {"scales", "analysis.spread_scales"}};
  return o;
}

// args split in one pass: the --analysis.KEY options go to `settings`, the other options to the result as
// "--key=value" with their keys in `given`; anything else is passed on for options() to refuse.
std::vector<std::string> split_estimate_arguments(const std::vector<std::string>& args,
                                                  std::vector<std::pair<std::string, std::string>>& settings,
                                                  std::vector<std::string>& given) {
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].rfind("--", 0) != 0) {
      rest.push_back(args[i]);
      continue;
    }
    const auto option = take_option(args, i, "qgml estimate: ");
    if (option.first.rfind("analysis.", 0) == 0) {
      settings.push_back(option);
      continue;
    }
    given.push_back(option.first);
    rest.push_back("--" + option.first + "=" + option.second);
  }
  return rest;
}

// qgml estimate's options as the analysis settings (same parsers, ranges and messages as the settings):
// every analysis.* setting at its default, or as given by --analysis.KEY, and the short options.
EstimateRequest estimate_request(const std::map<std::string, std::string>& o,
                                 std::vector<std::pair<std::string, std::string>> settings,
                                 const std::vector<std::string>& given) {
  EstimateRequest r;
  r.matrices = o.at("matrices");
  r.data = o.at("data");
  r.out = o.at("out");
  number(o, "min-gap-ratio", "analysis.min_gap_ratio");
  number(o, "noise-floor", "analysis.noise_floor");
  number(o, "first-gap-exponent", "analysis.first_gap_exponent");
  number(o, "chunk", "analysis.chunk");
  if (const std::string problem = setting_problem("analysis.kernel", o.at("kernel")); !problem.empty())
    throw Error("--kernel = '" + o.at("kernel") + "': " + problem);
  for (const auto& short_option : estimate_short_options()) {
    const std::string& option = short_option.first;
    const std::string& key = short_option.second;
    const bool as_setting =
        std::any_of(settings.begin(), settings.end(), [&](const auto& s) { return s.first == key; });
    const bool as_option = std::find(given.begin(), given.end(), option) != given.end();
    if (as_setting && as_option)
      throw Error("qgml estimate: --" + option + " and --" + key + " are the same setting; give one");
    if (!as_setting) settings.emplace_back(key, o.at(option));
  }
  const Config c = load_config("", settings);
  const AnalysisSection a = read_run_settings(c).analysis;
  r.geometry = a.geometry;
  r.chunk = a.chunk;
  r.single_precision = o.at("precision") == "float";
  return r;
}

}  // namespace

int estimate_command(const std::vector<std::string>& all_args) {
  std::vector<std::pair<std::string, std::string>> settings;
  std::vector<std::string> given;
  const std::vector<std::string> args = split_estimate_arguments(all_args, settings, given);
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
  if (o.at("precision") != "float" && o.at("precision") != "double") throw Error("--precision must be double or float");
  const EstimateReport report = estimate_from_files(estimate_request(o, settings, given));
  if (!report.writer) return 0;
  const DimensionSummary& sum = report.analysis.summary;
  std::printf("%ld points, D = %d, N = %d, %s metric\n", sum.points, report.d, report.n, o.at("metric").c_str());
  for (const std::string& line : summary_lines(sum)) std::printf("%s\n", line.c_str());
  std::printf("estimated intrinsic dimension: %d%s\n", sum.mode, sum.uncertain ? " (uncertain)" : "");
  std::printf("outputs: %s/per_point.csv, %s/dimension_summary.json\n", o.at("out").c_str(), o.at("out").c_str());
  return 0;
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
  if (o.at("precision") != "float" && o.at("precision") != "double") throw Error("--precision must be double or float");
  EvaluationRequest r;  // the options first: a bad one is reported before any file is read
  r.matrices = o.at("matrices");
  r.data = o.at("data");
  r.out = o.at("out");
  r.loss.w = number(o, "w", "training.w");
  r.loss.penalty = parse_penalty_kind(o.at("penalty"));
  r.loss.penalty_weight = number(o, "penalty-weight", "training.penalty_weight");
  r.single_precision = o.at("precision") == "float";
  const EvaluationReport e = evaluate_files(r);
  std::printf("loss %.12g (reconstruction %.12g, fluctuation %.12g, penalty %.6g) over %d points\n", e.loss,
              e.reconstruction, e.fluctuation, e.penalty, e.points);
  std::printf("outputs: %s/{loss.json, gradient.npy, xbar.npy, sigma2.npy, energy.npy, per_point.csv}\n",
              r.out.c_str());
  return 0;
}

// qgml info lists the kernel plan up to this N (the automatic rules change nowhere above 257).
constexpr int info_max_n = 512;

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
  // What runs at each N with every kernel setting automatic: the kernel plan (plan/kernel_plan.hpp).
  for (const Precision precision : {Precision::double_precision, Precision::single_precision}) {
    std::printf("kernels on %s in %s precision (automatic settings):\n", Exec::name(),
                precision == Precision::double_precision ? "double" : "single");
    for (const KernelPlanRange& r : plan_ranges(backend_of<Exec>, precision, info_max_n))
      std::printf("  N %d%s: %s\n", r.first, r.last > r.first ? ("-" + std::to_string(r.last)).c_str() : "",
                  r.summary.c_str());
  }
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
