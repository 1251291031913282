#include "analysis.hpp"

#include <cstdlib>

namespace qgml::app {

GeometrySettings geometry_settings(const std::string& metric, double min_gap_ratio) {
  GeometrySettings s;
  s.metric = parse_metric_kind(metric);
  s.geometric_tensor = s.metric == MetricKind::fubini_study;
  s.estimator.min_gap_ratio = min_gap_ratio;
  return s;
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
