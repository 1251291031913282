// Dimension analysis of a trained configuration on its data, written into a run or output directory:
// per_point.csv (point, reconstruction, metric eigenvalues, estimate) and dimension_summary.json.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>

#include "qgml/atomic_file.hpp"
#include "qgml/evaluate.hpp"
#include "qgml/quantum_geometry.hpp"

#include "config.hpp"

namespace qgml::app {

GeometrySettings geometry_settings(const std::string& metric, double min_gap_ratio);

// Runs python3 plot_run.py on the run directory when python3 with matplotlib is available.
void plot_run(const std::string& dir, bool quiet);

template <class Real, class ExecSpace, class PointsView>
DimensionSummary analyze_points(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                                const PointsView& data, const GeometrySettings& settings, int chunk,
                                const std::string& out_dir) {
  const int count = int(data.extent(0)), d = config.dimension();
  const int c = std::min(chunk, count);
  QuantumGeometry<Real, ExecSpace> geometry(d, config.size(), c, false);
  const auto e = evaluate(exec, config, data, LossSettings{}, c);
  auto xbar = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.xbar);
  auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), data);
  std::vector<long> histogram(d + 1, 0);
  std::ostringstream csv;
  csv.precision(10);
  for (int k = 0; k < d; ++k) csv << "x" << k << ",";
  for (int k = 0; k < d; ++k) csv << "xbar" << k << ",";
  for (int k = 0; k < d; ++k) csv << "e" << k << ",";
  csv << "dimension\n";
  long failed = 0;
  for (int start = 0; start < count; start += c) {
    const int m = std::min(c, count - start);
    geometry.compute(exec, config, Kokkos::subview(data, Kokkos::make_pair(start, start + m), Kokkos::ALL), settings);
    auto ev = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), geometry.eigenvalues());
    auto dim = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), geometry.dimension());
    for (int t = 0; t < m; ++t) {
      for (int k = 0; k < d; ++k) csv << x(start + t, k) << ",";
      for (int k = 0; k < d; ++k) csv << xbar(start + t, k) << ",";
      for (int k = 0; k < d; ++k) csv << ev(t, k) << ",";
      csv << dim(t) << "\n";
      if (dim(t) >= 0 && dim(t) <= d)
        ++histogram[dim(t)];
      else
        ++failed;
    }
  }
  const DimensionSummary s = summarize_dimensions(histogram);
  namespace fs = std::filesystem;
  write_file_atomically((fs::path(out_dir) / "per_point.csv").string(), csv.str());
  write_dimension_summary_json(
      (fs::path(out_dir) / "dimension_summary.json").string(), s,
      "\"metric\": \"" + to_string(settings.metric) + "\",\n  \"failed_points\": " + std::to_string(failed));
  return s;
}

template <class Real, class ExecSpace, class PointsView>
DimensionSummary analyze(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                         const PointsView& data, const Config& c, const std::string& out_dir) {
  return analyze_points(exec, config, data,
                        geometry_settings(c.text("analysis.metric"), c.real("analysis.min_gap_ratio")),
                        int(c.integer("analysis.chunk")), out_dir);
}

}  // namespace qgml::app
