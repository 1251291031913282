// qgml estimate's analysis of a data file under a configuration file (estimate_from_files.hpp).
#include "estimate/estimate_from_files.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "qgml/common/error.hpp"
#include "qgml/common/memory_budget.hpp"
#include "qgml/io/configuration_io.hpp"
#include "qgml/io/data_io.hpp"
#include "qgml/parallel/communicator.hpp"

#include "analysis/analysis.hpp"
#include "common/format.hpp"
#include "run/parallel.hpp"
#include "run/run_directory.hpp"

namespace qgml::app {

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;

// H(x) = 1/2 sum_k (A_k - x_k)^2 (docs/math.md 2.1) has a usable ground state only where its entries, of
// order |A|^2 + |x|^2, are finite and the A-dependent part, of order |A| |x|, is not lost to rounding
// against |x|^2 (|A| >= eps |x|); otherwise every eigenvalue rounds to the same number and the
// "geometry" is that of rounding. The count of the shard's points that have one, read on the host as the
// points are read.
template <class Real>
long usable_points(const HostMatrices& m, const HostData& points, double& largest_entry) {
  double a = 0;
  for (const auto& z : m.values) a = std::max(a, std::abs(z));
  largest_entry = a;
  const double eps = std::numeric_limits<Real>::epsilon();
  const double big = std::sqrt(double(std::numeric_limits<Real>::max()) / (4.0 * m.D * m.N));
  long usable = 0;
  for (long i = 0; i < long(points.rows); ++i) {
    double x = 0;
    for (long k = 0; k < long(points.cols); ++k)
      x = std::max(x, std::abs(points.values[std::size_t(i * points.cols + k)]));
    usable += a > 0 && a < big && x < big && a >= eps * x ? 1 : 0;
  }
  return usable;
}

template <class Real>
EstimateReport estimate(const EstimateRequest& r) {
  const Exec exec;
  Communicator& comm = communicator();
  MatrixConfiguration<Real, Exec> config;
  RealMatrix<Real, Mem> data;
  run_collectively(comm, [&] {
    const HostMatrices m = load_matrices(r.matrices);
    const HostShard shard = read_points_shard(r.data, comm.rank(), comm.size());
    if (shard.data.cols != m.D)
      throw Error("the data '" + r.data + "' have D = " + std::to_string(shard.data.cols) +
                  " coordinates but the configuration '" + r.matrices + "' has D = " + std::to_string(m.D) +
                  " matrices");
    if (shard.data.rows == 0)
      throw Error("the data '" + r.data + "' have " + std::to_string(shard.total) + " points, too few for " +
                  std::to_string(comm.size()) + " ranks");
    // No point with a finite ground state at all: an error, not a dimension of 0.
    double a = 0;
    if (usable_points<Real>(m, shard.data, a) == 0)
      throw Error(
          format("no point has a finite ground state: the data '%s' (%zu points) and "
                 "the matrices '%s' (largest entry %.3g) are of too different or extreme scales for "
                 "H(x) = 1/2 sum_k (A_k - x_k)^2 in %s precision; standardise the data or rescale the matrices",
                 r.data.c_str(), std::size_t(shard.data.rows), r.matrices.c_str(), a,
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
    check_analysis_needs<Real, Exec>(r.geometry, r.chunk, std::int64_t(shard.data.rows),
                                     comm.rank() == 0 ? shard.total : 0, int(m.D), int(m.N), data_bytes + matrix_bytes,
                                     memory_budget(exec), p);
    config = to_configuration<Real>(m, exec);
    data = to_device_points<Real>(exec, shard.data);
    if (comm.rank() == 0) prepare_output_directory(r.out);
  });
  EstimateReport report;
  report.analysis = analyze_dimension(exec, config, data, r.geometry, r.chunk, comm);
  write_analysis(report.analysis, r.out, comm,
                 JsonFields()
                     .add("min_gap_ratio", r.geometry.estimator.min_gap_ratio)
                     .add("noise_floor", r.geometry.estimator.noise_floor)
                     .add("first_gap_exponent", r.geometry.estimator.first_gap_exponent));
  // Every rank holds the summary of all points: all ranks fail alike.
  if (report.analysis.summary.points == 0)
    throw Error("no point has a finite estimate (all " + std::to_string(report.analysis.failed_points) +
                " points failed): the data or the matrices are likely of an extreme scale (standardise the data "
                "or rescale the matrices); per-point results in " +
                r.out + "/per_point.csv");
  report.d = config.dimension();
  report.n = config.matrix_size();
  report.writer = comm.rank() == 0;
  return report;
}

}  // namespace

EstimateReport estimate_from_files(const EstimateRequest& request) {
  return request.single_precision ? estimate<float>(request) : estimate<double>(request);
}

}  // namespace qgml::app
