// Dimension analysis of a trained configuration on its data, written into a run or output directory:
// per_point.csv (point, reconstruction, metric eigenvalues, estimate) and dimension_summary.json.
#pragma once

#include <Kokkos_Core.hpp>

#include <string>
#include <vector>

#include "qgml/geometry/analyze_dimension.hpp"
#include "qgml/parallel/communicator.hpp"

#include "config.hpp"

namespace qgml::app {

// The analysis.* settings (metric and gap rule).
GeometrySettings geometry_settings(const Config& c);
GeometrySettings geometry_settings(const std::string& metric, double min_gap_ratio, double noise_floor,
                                   double first_gap_exponent);

// The summary lines every command prints: the histogram, mode/median/mean, the verdict.
std::vector<std::string> summary_lines(const DimensionSummary& s);

// Runs python3 plot_run.py on the run directory when python3 with matplotlib is available.
void plot_run(const std::string& dir, bool quiet);

// Writes per_point.csv and dimension_summary.json of `analysis` (rank 0's rows) into out_dir on rank
// 0. A collective: a failed write fails on every rank.
// `extra`: further fields of dimension_summary.json (e.g. the run's automatic choices).
void write_analysis(const DimensionAnalysis& analysis, const std::string& out_dir, Communicator& comm,
                    const JsonFields& extra = {});

template <class Real, class ExecSpace, class PointsView>
DimensionSummary analyze(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                         const PointsView& data, const Config& c, const std::string& out_dir, Communicator& comm,
                         const JsonFields& extra = {}) {
  const DimensionAnalysis a =
      analyze_dimension(exec, config, data, geometry_settings(c), int(c.integer("analysis.chunk")), comm);
  write_analysis(a, out_dir, comm, extra);
  return a.summary;
}

}  // namespace qgml::app
