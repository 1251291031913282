#include "analysis/analysis.hpp"

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <variant>

#include "qgml/io/atomic_file.hpp"

#include "run/child_process.hpp"

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

std::vector<int> parse_spread_scales(const std::string& text) {
  std::vector<int> scales;
  if (text == "none" || text.empty()) return scales;
  auto bad = [&](const std::string& why) {
    return Error("analysis.spread_scales: '" + text + "': " + why +
                 "; expected neighbour counts >= 1 in ascending order, separated by commas "
                 "(at most " +
                 std::to_string(TangentSpreadSettings::max_scales) + "), e.g. 10,20,50, or none");
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    if (item.empty() || item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos)
      throw bad("'" + item + "' is not a whole number");
    const int k = std::stoi(item);
    if (k < 1) throw bad("a count must be at least 1");
    if (!scales.empty() && k <= scales.back()) throw bad("the counts must ascend");
    scales.push_back(k);
    if (int(scales.size()) > TangentSpreadSettings::max_scales) throw bad("too many counts");
    start = end + 1;
  }
  return scales;
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
  if (!s.scales.empty()) {  // the dimension per scale (geometry/tangent_spread.hpp)
    std::string text = "dimension per scale (k nearest points, mean radius: mode, fraction at it):";
    for (const ScaleDimension& sc : s.scales) {
      if (sc.mode < 0) continue;
      std::snprintf(line, sizeof line, " k %d, r %.3g: %d (%.0f %%);", sc.neighbours, sc.radius, sc.mode,
                    100 * sc.fraction);
      text += line;
    }
    if (!s.scale_verdict.empty()) text += " " + s.scale_verdict;
    lines.push_back(text);
    // The local covariance and the scale the estimate reads it at (geometry/local_dimension.hpp).
    std::string local = "local covariance (k nearest points: mode of its reading):";
    bool any = false;
    for (const ScaleDimension& sc : s.scales) {
      if (sc.local_mode < 0) continue;
      std::snprintf(line, sizeof line, "%s k %d: %d", any ? "," : "", sc.neighbours, sc.local_mode);
      local += line;
      any = true;
    }
    if (any) {
      if (s.local_scale > 0)
        std::snprintf(
            line, sizeof line,
            "; read at k = %d (the smallest k whose mode d is at most (k - 1) / analysis.local_pca_consistency)",
            s.local_scale);
      else
        std::snprintf(line, sizeof line, "; no scale resolves its mode (analysis.local_pca_consistency): not used");
      local += line;
      std::snprintf(line, sizeof line, "; spread check at k = %d", s.spread_neighbours);
      local += line;
      if (s.no_gap_fraction > 0) {
        std::snprintf(line, sizeof line,
                      "; the metric has no gap at %.0f %% of the points (the model does not resolve them at this N)",
                      100 * s.no_gap_fraction);
        local += line;
      }
      lines.push_back(local);
    }
    // The neighbour-distance reading of the points neither the metric nor the local covariance resolves.
    if (s.distance_neighbours > 0 && s.unresolved_fraction > 0) {
      if (s.distance_dimension > 0)
        std::snprintf(line, sizeof line,
                      "neighbour distances: %.1f %% of the points are resolved neither by the metric nor by the local "
                      "covariance (it reads their curvature); there the estimate is the dimension of the distances to "
                      "the %d nearest points, %.2f, read as %d (used where at least analysis.distance_share = %g of "
                      "the points are unresolved)",
                      100 * s.unresolved_fraction, s.distance_neighbours, s.distance_reading, s.distance_dimension,
                      s.distance_share);
      else
        std::snprintf(line, sizeof line,
                      "neighbour distances: %.1f %% of the points are resolved neither by the metric nor by the local "
                      "covariance, fewer than analysis.distance_share = %g: they keep the metric's estimate (the "
                      "distances to the %d nearest points read %.2f there)",
                      100 * s.unresolved_fraction, s.distance_share, s.distance_neighbours, s.distance_reading);
      lines.push_back(line);
    }
  }
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
