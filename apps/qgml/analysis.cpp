#include "analysis.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "qgml/io/atomic_file.hpp"

namespace qgml::app {

GeometrySettings geometry_settings(const std::string& metric, double min_gap_ratio) {
  GeometrySettings s;
  s.metric = parse_metric_kind(metric);
  s.estimator.min_gap_ratio = min_gap_ratio;
  return s;
}

void write_analysis(const DimensionAnalysis& analysis, const std::string& out_dir, Communicator& comm) {
  const int d = analysis.ambient_dimension;
  run_collectively(comm, [&] {
    if (comm.rank() != 0) return;
    std::ostringstream csv;
    csv.precision(10);
    for (int k = 0; k < d; ++k) csv << "x" << k << ",";
    for (int k = 0; k < d; ++k) csv << "xbar" << k << ",";
    for (int k = 0; k < d; ++k) csv << "e" << k << ",";
    csv << "dimension\n";
    for (long t = 0; t < analysis.count; ++t) {
      const std::size_t row = std::size_t(t) * d;
      for (int k = 0; k < d; ++k) csv << analysis.points[row + k] << ",";
      for (int k = 0; k < d; ++k) csv << analysis.xbar[row + k] << ",";
      for (int k = 0; k < d; ++k) csv << analysis.eigenvalues[row + k] << ",";
      csv << analysis.dimension[t] << "\n";
    }
    namespace fs = std::filesystem;
    write_file_atomically((fs::path(out_dir) / "per_point.csv").string(), csv.str());
    write_dimension_summary_json((fs::path(out_dir) / "dimension_summary.json").string(), analysis.summary,
                                 JsonFields()
                                     .add("metric", to_string(analysis.metric))
                                     .add("failed_points", std::int64_t(analysis.failed_points)));
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
  if (std::system((python + " -c 'import matplotlib' >/dev/null 2>&1").c_str()) != 0) {
    if (!quiet) std::printf("(plots skipped: python3 with matplotlib not found)\n");
    return;
  }
  const std::string cmd = python + " '" + script + "' '" + dir + "'" + (quiet ? " >/dev/null 2>&1" : "");
  if (std::system(cmd.c_str()) != 0 && !quiet) std::printf("(the plot script failed; the run's data are complete)\n");
}

}  // namespace qgml::app
