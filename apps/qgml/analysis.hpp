// Dimension analysis of a trained configuration on its data, written into a run or output directory:
// per_point.csv (point, reconstruction, metric eigenvalues, estimate) and dimension_summary.json.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "qgml/geometry/quantum_geometry.hpp"
#include "qgml/io/atomic_file.hpp"
#include "qgml/parallel/communicator.hpp"
#include "qgml/train/evaluate.hpp"

#include "config.hpp"

namespace qgml::app {

GeometrySettings geometry_settings(const std::string& metric, double min_gap_ratio);

// Runs python3 plot_run.py on the run directory when python3 with matplotlib is available.
void plot_run(const std::string& dir, bool quiet);

// A collective: each rank analyses its own points (`data`, rows first.. of all ranks' points in rank
// order); the per-point rows are gathered to rank 0, which writes the files, and the histogram of
// estimates is summed over the ranks, so every rank returns the global summary.
template <class Real, class ExecSpace, class PointsView>
DimensionSummary analyze_points(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                                const PointsView& data, const GeometrySettings& settings, int chunk,
                                const std::string& out_dir, Communicator& comm) {
  const int count = int(data.extent(0)), d = config.dimension();
  const int c = std::max(1, std::min(chunk, count));
  const int width = 3 * d + 1;  // x, xbar, metric eigenvalues, estimate
  QuantumGeometry<Real, ExecSpace> geometry(d, config.size(), c, false);
  const auto e = evaluate(exec, config, data, LossSettings{}, c);
  auto xbar = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.xbar);
  auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), data);
  std::vector<std::int64_t> histogram(d + 2, 0);  // estimates 0..d, then failures
  std::vector<double> rows;
  rows.reserve(std::size_t(count) * width);
  for (int start = 0; start < count; start += c) {
    const int m = std::min(c, count - start);
    geometry.compute(exec, config, Kokkos::subview(data, Kokkos::make_pair(start, start + m), Kokkos::ALL), settings);
    auto ev = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), geometry.eigenvalues());
    auto dim = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), geometry.dimension());
    for (int t = 0; t < m; ++t) {
      for (int k = 0; k < d; ++k) rows.push_back(double(x(start + t, k)));
      for (int k = 0; k < d; ++k) rows.push_back(double(xbar(start + t, k)));
      for (int k = 0; k < d; ++k) rows.push_back(double(ev(t, k)));
      rows.push_back(double(dim(t)));
      ++histogram[dim(t) >= 0 && dim(t) <= d ? dim(t) : d + 1];
    }
  }
  comm.allreduce_sum(histogram.data(), histogram.size());
  const std::vector<double> all = comm.gather_to_root(rows);
  const std::int64_t failed = histogram[d + 1];
  const DimensionSummary s = summarize_dimensions(std::vector<long>(histogram.begin(), histogram.begin() + d + 1));
  run_collectively(comm, [&] {
    if (comm.rank() != 0) return;
    std::ostringstream csv;
    csv.precision(10);
    for (int k = 0; k < d; ++k) csv << "x" << k << ",";
    for (int k = 0; k < d; ++k) csv << "xbar" << k << ",";
    for (int k = 0; k < d; ++k) csv << "e" << k << ",";
    csv << "dimension\n";
    for (std::size_t r = 0; r + width <= all.size(); r += width) {
      for (int q = 0; q < width - 1; ++q) csv << all[r + q] << ",";
      csv << long(all[r + width - 1]) << "\n";
    }
    namespace fs = std::filesystem;
    write_file_atomically((fs::path(out_dir) / "per_point.csv").string(), csv.str());
    write_dimension_summary_json((fs::path(out_dir) / "dimension_summary.json").string(), s,
                                 JsonFields().add("metric", to_string(settings.metric)).add("failed_points", failed));
  });
  return s;
}

template <class Real, class ExecSpace, class PointsView>
DimensionSummary analyze_points(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                                const PointsView& data, const GeometrySettings& settings, int chunk,
                                const std::string& out_dir) {
  SelfCommunicator self;
  return analyze_points(exec, config, data, settings, chunk, out_dir, self);
}

template <class Real, class ExecSpace, class PointsView>
DimensionSummary analyze(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                         const PointsView& data, const Config& c, const std::string& out_dir, Communicator& comm) {
  return analyze_points(exec, config, data,
                        geometry_settings(c.text("analysis.metric"), c.real("analysis.min_gap_ratio")),
                        int(c.integer("analysis.chunk")), out_dir, comm);
}

}  // namespace qgml::app
