#include "analysis.hpp"

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <variant>

#include "qgml/io/atomic_file.hpp"

#include "child_process.hpp"

namespace qgml::app {

GeometrySettings geometry_settings(const std::string& metric, double min_gap_ratio, double noise_floor,
                                   double first_gap_exponent) {
  GeometrySettings s;
  s.metric = parse_metric_kind(metric);
  s.estimator.min_gap_ratio = min_gap_ratio;
  s.estimator.noise_floor = noise_floor;
  s.estimator.first_gap_exponent = first_gap_exponent;
  return s;
}

GeometrySettings geometry_settings(const Config& c) {
  GeometrySettings s = geometry_settings(c.text("analysis.metric"), c.real("analysis.min_gap_ratio"),
                                         c.real("analysis.noise_floor"), c.real("analysis.first_gap_exponent"));
  s.kernel = parse_geometry_kernel(c.text("analysis.kernel"));
  s.spread.enabled = c.boolean("analysis.spread_check");
  s.spread.neighbours = int(c.integer("analysis.spread_neighbours"));
  s.spread.promote = c.real("analysis.spread_promote");
  s.spread.demote = c.real("analysis.spread_demote");
  s.spread.band = c.real("analysis.spread_band");
  s.spread.promote_max = c.real("analysis.spread_promote_max");
  return s;
}

std::vector<std::string> summary_lines(const DimensionSummary& s) {
  std::vector<std::string> lines;
  char line[512];
  for (std::size_t d = 0; d < s.histogram.size(); ++d)
    if (s.histogram[d] > 0) {
      std::snprintf(line, sizeof line, "  d = %zu: %ld points (%.1f %%)", d, s.histogram[d], 100.0 * s.fraction()[d]);
      lines.emplace_back(line);
    }
  // With the error bar (geometry/dimension_interval.hpp) when the analysis computed one.
  char spread[160] = "", mean_spread[48] = "";
  if (s.interval.resamples > 0) {
    std::snprintf(spread, sizeof spread, " +- %.2f (90 %% interval [%d, %d] over %d resamples)", s.interval.error,
                  s.interval.low, s.interval.high, s.interval.resamples);
    std::snprintf(mean_spread, sizeof mean_spread, " +- %.3f", s.interval.mean_error);
  }
  std::snprintf(line, sizeof line,
                "intrinsic dimension: mode %d%s, median %g, mean %.3f%s (fraction at the mode %.4f; D = %d): %s",
                s.mode, spread, s.median, s.mean, mean_spread, s.points > 0 ? s.fraction()[std::size_t(s.mode)] : 0.0,
                s.ambient_dimension, s.verdict.c_str());
  lines.emplace_back(line);
  return lines;
}

void write_analysis(const DimensionAnalysis& analysis, const std::string& out_dir, Communicator& comm,
                    const JsonFields& extra) {
  const int d = analysis.ambient_dimension;
  run_collectively(comm, [&] {
    if (comm.rank() != 0) return;
    std::ostringstream csv;
    csv.precision(10);
    for (int k = 0; k < d; ++k) csv << "x" << k << ",";
    for (int k = 0; k < d; ++k) csv << "xbar" << k << ",";
    for (int k = 0; k < d; ++k) csv << "e" << k << ",";
    csv << "dimension,confidence,gap_ratio\n";
    for (long t = 0; t < analysis.count; ++t) {
      const std::size_t row = std::size_t(t) * d;
      for (int k = 0; k < d; ++k) csv << analysis.points[row + k] << ",";
      for (int k = 0; k < d; ++k) csv << analysis.xbar[row + k] << ",";
      for (int k = 0; k < d; ++k) csv << analysis.eigenvalues[row + k] << ",";
      csv << analysis.dimension[t] << "," << analysis.confidence[t] << "," << analysis.gap_ratio[t] << "\n";
    }
    namespace fs = std::filesystem;
    write_file_atomically((fs::path(out_dir) / "per_point.csv").string(), csv.str());
    JsonFields fields;
    fields.add("metric", to_string(analysis.metric)).add("failed_points", std::int64_t(analysis.failed_points));
    for (const auto& [key, value] : extra.fields())
      std::visit([&, &k = key](const auto& v) { fields.add(k, v); }, value);
    write_dimension_summary_json((fs::path(out_dir) / "dimension_summary.json").string(), analysis.summary, fields);
  });
}

void plot_run(const std::string& dir, bool quiet) {
  namespace fs = std::filesystem;
  const char* candidates[] = {QGML_PLOT_SCRIPT, QGML_INSTALLED_PLOT_SCRIPT};
  std::string script;
  for (const char* p : candidates)
    if (fs::exists(p)) {
      script = p;
      break;
    }
  if (script.empty()) return;
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  if (run_program({python, "-c", "import matplotlib"}, true) != 0) {
    if (!quiet) std::printf("(plots skipped: python3 with matplotlib not found)\n");
    return;
  }
  std::fflush(stdout);  // the log lines first, then the script's
  if (run_program({python, script, dir}, quiet) != 0 && !quiet)
    std::printf("(the plot script failed; the run's data are complete)\n");
}

}  // namespace qgml::app
