#include "qgml/geometry/analyze_dimension.hpp"

#include <cstring>

#include "qgml/geometry/dimension_interval.hpp"

namespace qgml::detail {

AllPoints share_points(const std::vector<double>& mine, int d, Communicator& comm) {
  AllPoints r;
  if (comm.size() == 1) {
    r.values = mine;
    return r;
  }
  const std::vector<double> counts = comm.gather_to_root({double(mine.size() / std::size_t(std::max(1, d)))});
  const std::vector<double> points = comm.gather_to_root(mine);
  std::string bytes;
  if (comm.rank() == 0) {  // the counts, then the points
    bytes.resize((counts.size() + points.size()) * sizeof(double));
    std::memcpy(bytes.data(), counts.data(), counts.size() * sizeof(double));
    std::memcpy(bytes.data() + counts.size() * sizeof(double), points.data(), points.size() * sizeof(double));
  }
  bytes = comm.broadcast(bytes, 0);
  const std::size_t ranks = std::size_t(comm.size());
  QGML_REQUIRE(bytes.size() >= ranks * sizeof(double) && bytes.size() % sizeof(double) == 0,
               "qgml::analyze_dimension: the shared points have " + std::to_string(bytes.size()) + " bytes");
  std::vector<double> all(bytes.size() / sizeof(double));
  std::memcpy(all.data(), bytes.data(), bytes.size());
  for (int k = 0; k < comm.rank(); ++k) r.offset += std::int64_t(all[std::size_t(k)]);
  r.values.assign(all.begin() + std::ptrdiff_t(ranks), all.end());
  return r;
}

DimensionAnalysis finish_dimension_analysis(DimensionRows& rows, MetricKind metric,
                                            const DimensionEstimatorSettings& estimator, bool spread_checked,
                                            Communicator& comm) {
  const int d = rows.d, width = rows.width();
  comm.allreduce_sum(rows.histogram.data(), rows.histogram.size());
  const std::vector<double> all = comm.gather_to_root(rows.values);
  DimensionAnalysis r;
  r.metric = metric;
  r.ambient_dimension = d;
  r.failed_points = long(rows.histogram[std::size_t(d) + 1]);
  r.summary = summarize_dimensions(std::vector<long>(rows.histogram.begin(), rows.histogram.begin() + d + 1));
  r.count = long(all.size() / width);
  r.points.reserve(std::size_t(r.count) * d);
  r.xbar.reserve(std::size_t(r.count) * d);
  r.eigenvalues.reserve(std::size_t(r.count) * d);
  r.energy.reserve(r.count);
  r.dimension.reserve(r.count);
  r.confidence.reserve(r.count);
  r.gap_ratio.reserve(r.count);
  for (std::size_t row = 0; row + width <= all.size(); row += width) {
    const double* v = all.data() + row;
    r.points.insert(r.points.end(), v, v + d);
    r.xbar.insert(r.xbar.end(), v + d, v + 2 * d);
    r.eigenvalues.insert(r.eigenvalues.end(), v + 2 * d, v + 3 * d);
    r.energy.push_back(v[3 * d]);
    r.dimension.push_back(int(v[3 * d + 1]));
    r.confidence.push_back(v[3 * d + 2]);
    r.gap_ratio.push_back(v[3 * d + 3]);
  }
  double shared[5] = {0, 0, 0, 0, 0};  // low, high, error, mean_error, resamples: rank 0's, summed over ranks
  if (comm.rank() == 0) {
    std::vector<bool> valid(std::size_t(r.count));
    for (long t = 0; t < r.count; ++t) valid[std::size_t(t)] = r.dimension[std::size_t(t)] >= 0;
    const DimensionInterval i = dimension_interval(r.eigenvalues, valid, d, estimator, default_dimension_resamples, 1,
                                                   spread_checked ? r.dimension : std::vector<int>{});
    shared[0] = i.low;
    shared[1] = i.high;
    shared[2] = i.error;
    shared[3] = i.mean_error;
    shared[4] = i.resamples;
  }
  comm.allreduce_sum(shared, 5, false);
  r.summary.interval = {int(shared[0]), int(shared[1]), shared[2], shared[3], int(shared[4])};
  // The dimension per scale: each scale's histogram and radii summed over the ranks.
  if (!rows.scales.empty()) {
    comm.allreduce_sum(rows.scale_histogram.data(), rows.scale_histogram.size());
    comm.allreduce_sum(rows.scale_radius.data(), rows.scale_radius.size());
    for (std::size_t s = 0; s < rows.scales.size(); ++s) {
      ScaleDimension sc;
      sc.neighbours = rows.scales[s];
      std::int64_t best = 0;
      for (int k = 0; k <= d; ++k) {
        const std::int64_t n = rows.scale_histogram[s * (std::size_t(d) + 1) + std::size_t(k)];
        sc.points += long(n);
        if (n > best) {
          best = n;
          sc.mode = k;
        }
      }
      if (sc.points > 0) {
        sc.radius = double(rows.scale_radius[s]) * DimensionRows::radius_unit / double(sc.points);
        sc.fraction = double(best) / double(sc.points);
      }
      r.summary.scales.push_back(sc);
    }
    r.summary.scale_verdict = scale_verdict(r.summary.scales);
  }
  return r;
}

}  // namespace qgml::detail
