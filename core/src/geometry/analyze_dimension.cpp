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

void combine_local_dimension(DimensionRows& rows, const GeometrySettings& settings, int n, Communicator& comm) {
  const int d = rows.d, width = rows.width();
  const std::int64_t count = std::int64_t(rows.values.size()) / width;
  const int scales = int(rows.effective_scales.size());
  const bool local = scales > 0 && !rows.local.empty();
  const std::size_t bins = std::size_t(d) + 1;
  std::vector<int> resolved;
  if (local) {
    std::vector<std::int64_t> readings(std::size_t(scales) * bins, 0);
    for (std::int64_t t = 0; t < count; ++t)
      for (int s = 0; s < scales; ++s) {
        const int v = rows.local[std::size_t(t) * scales + s];
        if (v >= 0 && v <= d) ++readings[std::size_t(s) * bins + std::size_t(v)];
      }
    comm.allreduce_sum(readings.data(), readings.size());
    rows.local_scale = choose_local_scale(readings, d, rows.effective_scales, settings.spread.local_consistency);
    resolved = resolved_local_scales(readings, d, rows.effective_scales, settings.spread.local_consistency);
    rows.local_modes.assign(std::size_t(scales), -1);
    for (int s = 0; s < scales; ++s) {
      std::int64_t best = 0;
      for (int v = 0; v <= d; ++v)
        if (readings[std::size_t(s) * bins + std::size_t(v)] > best) {
          best = readings[std::size_t(s) * bins + std::size_t(v)];
          rows.local_modes[std::size_t(s)] = v;
        }
    }
  }
  // Per point: the combined estimate in place of the checked one, and each scale's; m, the metric's
  // directions above the noise floor, once per point.
  const double floor = effective_noise_floor<double>(settings.estimator), ratio = settings.spread.no_gap_ratio;
  const double local_band = settings.spread.local_band;
  const bool local_agree = settings.spread.local_agree;
  const int chosen = rows.local_scale;
  const int* resolved_scale = resolved.data();
  double* values = rows.values.data();
  int* checked = rows.scale_checked.data();
  const int* readings = rows.local.data();
  std::int64_t* histogram = rows.histogram.data();
  std::int64_t* scale_histogram = rows.scale_histogram.data();
  std::vector<int> direction_counts(std::size_t(count), 0);
  int* directions_of = direction_counts.data();
  Kokkos::parallel_for("qgml::analyze_dimension::directions",
                       Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, count), [=](const std::int64_t t) {
                         const double* e = values + t * width + 2 * d;
                         int m = 0;
                         while (m < d && e[m] > floor * e[0]) ++m;
                         directions_of[t] = m;
                       });
  // The neighbour-distance reading (local_dimension.hpp): the unresolved points, and the sum of their L
  // in integer units (so that it is the same on any number of ranks).
  const double* distance_log = rows.distance_log.data();
  const bool distances = local && chosen >= 0 && !rows.distance_log.empty() && rows.distance_neighbours >= 2;
  constexpr double log_unit = 1e-6;
  // Per point, its share of sum `which` (0: unresolved points, 1: those with L, 2: their L in log_unit).
  auto pooled_term = [=](const std::int64_t t, const int which) -> std::int64_t {
    if (!locally_unresolved(int(values[t * width + 3 * d + 1]), readings[t * scales + chosen],
                            values[t * width + 3 * d + 3], directions_of[t], n, ratio))
      return 0;
    if (which == 0) return 1;
    if (!(distance_log[t] > 0)) return 0;
    return which == 1 ? 1 : std::int64_t(std::llround(distance_log[t] / log_unit));
  };
  std::int64_t pooled[3] = {0, 0, 0};
  for (int which = 0; which < 3 && distances; ++which)
    Kokkos::parallel_reduce(
        "qgml::analyze_dimension::distance_reading", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, count),
        [&](const std::int64_t t, std::int64_t& sum) { sum += pooled_term(t, which); }, pooled[which]);
  std::int64_t all_points = count;
  comm.allreduce_sum(pooled, 3);
  comm.allreduce_sum(&all_points, 1);
  rows.unresolved_points = pooled[0];
  rows.distance_share = settings.spread.distance_share;
  const int k_distance = rows.distance_neighbours;
  if (distances && pooled[1] > 0) {
    const double log_sum = double(pooled[2]) * log_unit;
    rows.distance_reading = log_sum > 0 ? double(k_distance - 1) * double(pooled[1]) / log_sum : 0;
    if (double(pooled[0]) >= settings.spread.distance_share * double(all_points))
      rows.distance_dimension = neighbour_distance_dimension(log_sum, pooled[1], k_distance, d);
  }
  const int fallback = rows.distance_dimension;
  std::int64_t no_gap = 0;
  Kokkos::parallel_reduce(
      "qgml::analyze_dimension::combine", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, count),
      [&](const std::int64_t t, std::int64_t& without_gap) {
        double* row = values + t * width;
        const double* e = row + 2 * d;
        const int directions = directions_of[t];
        const double gap_ratio = row[3 * d + 3];
        int estimate = int(row[3 * d + 1]);
        if (estimate >= 1 && gap_ratio < ratio) ++without_gap;
        if (local && chosen >= 0) {
          estimate =
              combined_dimension(estimate, readings[t * scales + chosen], gap_ratio, directions, n, ratio, fallback);
          const int reading = readings[t * scales + chosen];
          int smallest = d + 1;
          bool stable = reading >= 0;
          for (int s = chosen; s < scales; ++s)
            if (resolved_scale[s]) {
              const int v = readings[t * scales + s];
              smallest = v < 0 ? -1 : (smallest < 0 || v > smallest ? smallest : v);
              stable = stable && v == reading;
            }
          estimate = locally_promoted(estimate, smallest > d ? -1 : smallest, e, d, floor, local_band);
          if (local_agree) estimate = locally_agreed(estimate, reading, stable, directions, d);
        }
        row[3 * d + 1] = double(estimate);
        Kokkos::atomic_add(&histogram[estimate >= 0 && estimate <= d ? estimate : d + 1], std::int64_t(1));
        for (int s = 0; s < scales; ++s) {
          int& v = checked[t * scales + s];
          if (local) {
            v = combined_dimension(v, readings[t * scales + s], gap_ratio, directions, n, ratio, fallback);
            v = locally_promoted(v, readings[t * scales + s], e, d, floor, local_band);
            if (local_agree) v = locally_agreed(v, readings[t * scales + s], true, directions, d);
          }
          if (v >= 0 && v <= d)
            Kokkos::atomic_add(&scale_histogram[std::size_t(s) * bins + std::size_t(v)], std::int64_t(1));
        }
      },
      no_gap);
  comm.allreduce_sum(&no_gap, 1);
  rows.no_gap_points = no_gap;
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
  r.summary.spread_neighbours = rows.spread_neighbours;
  if (r.summary.points > 0) r.summary.no_gap_fraction = double(rows.no_gap_points) / double(r.summary.points);
  if (!rows.distance_log.empty() || rows.distance_neighbours > 0) {
    r.summary.distance_neighbours = rows.distance_neighbours;
    if (r.summary.points > 0) r.summary.unresolved_fraction = double(rows.unresolved_points) / double(r.summary.points);
    r.summary.distance_reading = rows.distance_reading;
    r.summary.distance_dimension = rows.distance_dimension;
    r.summary.distance_share = rows.distance_share;
  }
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
      if (s < rows.local_modes.size()) sc.local_mode = rows.local_modes[s];
      r.summary.scales.push_back(sc);
    }
    if (rows.local_scale >= 0) r.summary.local_scale = rows.effective_scales[std::size_t(rows.local_scale)];
    r.summary.scale_verdict = scale_verdict(r.summary.scales);
  }
  return r;
}

}  // namespace qgml::detail
