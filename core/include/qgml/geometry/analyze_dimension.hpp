// Dimension analysis of a configuration on a set of points (docs/math.md 6): per point, one geometry pass
// (QuantumGeometry: one eigensolve of H(x) gives xbar, E_0, the metric spectrum and the estimate), in
// chunks; the histogram of estimates is summed over the ranks, the per-point rows are gathered to
// rank 0, and the global estimate gets its error bar (dimension_interval.hpp).
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "qgml/geometry/dimension_estimate.hpp"
#include "qgml/geometry/local_dimension.hpp"
#include "qgml/geometry/quantum_geometry.hpp"
#include "qgml/geometry/tangent_spread.hpp"
#include "qgml/parallel/communicator.hpp"

namespace qgml {

struct DimensionAnalysis {
  MetricKind metric = MetricKind::quantum;
  int ambient_dimension = 0;  // D
  DimensionSummary summary;   // over every rank's points with a valid estimate (on every rank)
  long failed_points = 0;     // points of every rank whose eigensolve failed (estimate -1)
  // Per-point rows of every rank in rank order, on rank 0 only (empty elsewhere); count x D row-major.
  long count = 0;
  std::vector<double> points;       // x
  std::vector<double> xbar;         // <psi_0|A_k|psi_0>
  std::vector<double> eigenvalues;  // of the metric, descending
  std::vector<double> energy;       // E_0
  std::vector<int> dimension;       // the estimate, -1 where the eigensolve failed
  std::vector<double> confidence;   // of the estimate (PointDimension::confidence), 0 where it failed
  std::vector<double> gap_ratio;    // PointDimension::gap_ratio, 0 where the eigensolve failed
};

namespace detail {

// Per-point values of one rank, appended chunk by chunk: D + D + D + 1 + 1 + 1 + 1 doubles per point
// (x, xbar, eigenvalues, E_0, estimate, confidence, gap ratio).
struct DimensionRows {
  int d = 0;
  std::vector<double> values;
  std::vector<std::int64_t> histogram;  // estimates 0 .. D, then failures (count_estimates)
  // Per point and scale (point-major): the spread check's estimate at the scale and the local
  // covariance's reading (-1: none); the neighbour counts the scales had.
  std::vector<int> scale_checked, local;
  std::vector<int> effective_scales;
  // The local covariance's scale (local_dimension.hpp; -1: none), its readings' modes per scale, the
  // points whose metric had no gap (summed over the ranks) and the spread check's k.
  int local_scale = -1;
  std::vector<int> local_modes;
  std::int64_t no_gap_points = 0;
  int spread_neighbours = 0;
  // Per point, the neighbour-distance statistic L (tangent_spread.hpp; -1: undefined; empty: off) over
  // distance_neighbours points; the points left unresolved (summed over the ranks), the pooled reading
  // over them (0: none) and the value they took (0: the reading was not used), and the share of all
  // points that decides (TangentSpreadSettings::distance_share).
  std::vector<double> distance_log;
  int distance_neighbours = 0;
  double distance_share = 0;
  std::int64_t unresolved_points = 0;
  double distance_reading = 0;
  int distance_dimension = 0;
  // The dimension per scale (tangent_spread.hpp): the neighbour counts, per scale the histogram of
  // estimates 0 .. D (scale-major) and the sum of the neighbourhood radii over the points counted, in
  // units of radius_unit (integers, so that the sum is the same on any number of ranks).
  static constexpr double radius_unit = 1e-6;
  std::vector<int> scales;
  std::vector<std::int64_t> scale_histogram;
  std::vector<std::int64_t> scale_radius;
  DimensionRows(int d_, const std::vector<int>& scales_)
      : d(d_),
        histogram(std::size_t(d_) + 2, 0),
        scales(scales_),
        scale_histogram(scales_.size() * (std::size_t(d_) + 1), 0),
        scale_radius(scales_.size(), 0) {}
  int width() const { return 3 * d + 4; }
};

// The local covariance's scale from every rank's readings, then per point (and per scale, for the
// dimension per scale) the combined estimate in place of the spread check's (local_dimension.hpp), and
// this rank's histograms of the estimates. n = N. A collective.
void combine_local_dimension(DimensionRows& rows, const GeometrySettings& settings, int n, Communicator& comm);

// Sums the histograms over the ranks, gathers the rows to rank 0, builds the result, the summary's
// error bar (dimension_interval on rank 0, then shared with every rank) and the dimension per scale. A
// collective.
DimensionAnalysis finish_dimension_analysis(DimensionRows& rows, MetricKind metric,
                                            const DimensionEstimatorSettings& estimator, bool spread_checked,
                                            Communicator& comm);

}  // namespace detail

// What analyze_dimension of `count` points of D = d coordinates (this rank's) in chunks of `chunk`
// points needs at N = n, known before anything is allocated: QuantumGeometry::needs of one chunk, and on
// host spaces the per-point rows (3 D + 4 doubles per point) of this rank's points and of `gathered`
// points more (every rank's on rank 0, gathered and then copied into the result; 0 elsewhere).
template <class Real, class ExecSpace>
GeometryNeeds analyze_dimension_needs(int d, int n, std::int64_t count, std::int64_t gathered,
                                      const GeometrySettings& settings, int chunk) {
  const int c = int(std::max<std::int64_t>(1, std::min<std::int64_t>(chunk, count)));
  GeometryNeeds needs = QuantumGeometry<Real, ExecSpace>::needs(d, n, c, settings);
  needs.memory_bytes +=
      TangentSpreadCheck<Real, ExecSpace>::needs_bytes(d, c, settings.spread, std::max(count, gathered));
  if (settings.spread.enabled && !settings.spread.scales.empty())  // their host mirrors and per-point rows
    needs.memory_bytes += double(c) * double(settings.spread.scales.size()) * (2 * sizeof(int) + sizeof(Real)) +
                          double(count) * double(settings.spread.scales.size()) * 2 * sizeof(int);
  if (settings.spread.enabled)  // every rank's points, on every rank (gathered counts rank 0's view of them)
    needs.memory_bytes += double(std::max(count, gathered)) * d * (2.0 * sizeof(double) + sizeof(Real));
  if constexpr (is_host_space_v<ExecSpace>)
    needs.memory_bytes += double(count + 2 * gathered) * (3.0 * d + 4) * sizeof(double);
  return needs;
}

namespace detail {

// Every rank's points in rank order (the spread check's neighbours, the same on every rank, so that
// the estimates do not depend on the number of ranks) and this rank's offset among them: the counts and
// the points gathered to rank 0, then broadcast as bytes. A collective.
struct AllPoints {
  std::vector<double> values;  // total x D, row-major
  std::int64_t offset = 0;     // of this rank's first point
};
AllPoints share_points(const std::vector<double>& mine, int d, Communicator& comm);

}  // namespace detail

// A collective: each rank analyses its own points (`points`, count x D, its shard of all ranks'
// points in rank order) in chunks of at most `chunk` points (buffers sized once).
template <class Real, class ExecSpace, class PointsView>
DimensionAnalysis analyze_dimension(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                                    const PointsView& points, const GeometrySettings& settings, int chunk,
                                    Communicator& comm) {
  const int count = int(points.extent(0)), d = config.dimension();
  QGML_REQUIRE(int(points.extent(1)) == d, "qgml::analyze_dimension: the points have " +
                                               std::to_string(points.extent(1)) +
                                               " coordinates, D = " + std::to_string(d));
  const int c = std::max(1, std::min(chunk, count));
  QuantumGeometry<Real, ExecSpace> geometry(d, config.matrix_size(), c, settings);
  auto x = Kokkos::create_mirror_view(Kokkos::HostSpace(), points);
  Kokkos::deep_copy(exec, x, points);
  qgml::fence(exec, "qgml::analyze_dimension: points on the host");
  // The spread check's neighbours: every rank's points (only this rank's on one process).
  RealMatrix<Real, typename ExecSpace::memory_space> reference("qgml::analyze_dimension::reference", 0, d);
  std::int64_t offset = 0, total = count;
  if (settings.spread.enabled) {
    std::vector<double> mine(std::size_t(count) * std::size_t(d));
    for (int t = 0; t < count; ++t)
      for (int k = 0; k < d; ++k) mine[std::size_t(t) * d + k] = double(x(t, k));
    const detail::AllPoints all = detail::share_points(mine, d, comm);
    offset = all.offset;
    total = std::int64_t(all.values.size()) / std::max(1, d);
    reference = RealMatrix<Real, typename ExecSpace::memory_space>(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "qgml::analyze_dimension::reference"), total, d);
    auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), reference);
    for (std::int64_t t = 0; t < total; ++t)
      for (int k = 0; k < d; ++k) host(t, k) = Real(all.values[std::size_t(t) * d + k]);
    Kokkos::deep_copy(exec, reference, host);
    qgml::fence(exec, "qgml::analyze_dimension: reference points");
  }
  TangentSpreadCheck<Real, ExecSpace> spread(d, c, settings.spread, total);
  detail::DimensionRows rows(d, settings.spread.enabled ? settings.spread.scales : std::vector<int>{});
  rows.values.reserve(std::size_t(count) * rows.width());
  rows.spread_neighbours = settings.spread.enabled ? spread.neighbours() : 0;
  const int scales = spread.scales();
  if (scales > 0) {
    const std::int64_t stride = tangent_spread_stride(total, settings.spread.max_reference);
    const std::int64_t available = std::max<std::int64_t>(1, (total + stride - 1) / stride - 1);
    for (int s = 0; s < scales; ++s)
      rows.effective_scales.push_back(int(std::min<std::int64_t>(settings.spread.scales[std::size_t(s)], available)));
    rows.scale_checked.reserve(std::size_t(count) * scales);
    if (spread.local()) rows.local.reserve(std::size_t(count) * scales);
  }
  const bool distances = spread.distance_log().extent(0) > 0;
  if (distances) {
    const std::int64_t stride = tangent_spread_stride(total, settings.spread.max_reference);
    rows.distance_neighbours =
        int(std::min<std::int64_t>(settings.spread.distance_neighbours, (total + stride - 1) / stride - 1));
    rows.distance_log.reserve(std::size_t(count));
  }
  auto distance_log = Kokkos::create_mirror_view(Kokkos::HostSpace(), spread.distance_log());
  auto xbar = Kokkos::create_mirror_view(Kokkos::HostSpace(), geometry.xbar());
  auto energy = Kokkos::create_mirror_view(Kokkos::HostSpace(), geometry.energy());
  auto ev = Kokkos::create_mirror_view(Kokkos::HostSpace(), geometry.eigenvalues());
  auto dim = Kokkos::create_mirror_view(Kokkos::HostSpace(), geometry.dimension());
  auto scale_dim = Kokkos::create_mirror_view(Kokkos::HostSpace(), spread.scale_dimension());
  auto scale_radius = Kokkos::create_mirror_view(Kokkos::HostSpace(), spread.scale_radius());
  auto local_dim = Kokkos::create_mirror_view(Kokkos::HostSpace(), spread.local_dimension());
  for (int start = 0; start < count; start += c) {
    const int m = std::min(c, count - start);
    const auto chunk_points = Kokkos::subview(points, Kokkos::make_pair(start, start + m), Kokkos::ALL);
    geometry.compute(exec, config, chunk_points, settings);
    spread.apply(exec, reference, chunk_points, offset + start, geometry.metric(), geometry.dimension(),
                 settings.spread, settings.estimator);
    Kokkos::deep_copy(exec, xbar, geometry.xbar());
    Kokkos::deep_copy(exec, energy, geometry.energy());
    Kokkos::deep_copy(exec, ev, geometry.eigenvalues());
    Kokkos::deep_copy(exec, dim, geometry.dimension());
    if (scales > 0) {
      Kokkos::deep_copy(exec, scale_dim, spread.scale_dimension());
      Kokkos::deep_copy(exec, scale_radius, spread.scale_radius());
    }
    if (spread.local()) Kokkos::deep_copy(exec, local_dim, spread.local_dimension());
    if (distances) Kokkos::deep_copy(exec, distance_log, spread.distance_log());
    qgml::fence(exec, "qgml::analyze_dimension: chunk on the host");
    for (int s = 0; s < scales; ++s)
      for (int t = 0; t < m; ++t)
        if (scale_dim(t, s) >= 0 && scale_dim(t, s) <= d)
          rows.scale_radius[std::size_t(s)] +=
              std::int64_t(std::llround(double(scale_radius(t, s)) / detail::DimensionRows::radius_unit));
    for (int t = 0; t < m; ++t) {
      for (int k = 0; k < d; ++k) rows.values.push_back(double(x(start + t, k)));
      for (int k = 0; k < d; ++k) rows.values.push_back(double(xbar(t, k)));
      for (int k = 0; k < d; ++k) rows.values.push_back(double(ev(t, k)));
      rows.values.push_back(double(energy(t)));
      rows.values.push_back(double(dim(t)));
      // The confidence of the same rule, on the host from the same (descending) eigenvalues.
      const auto point = dim(t) >= 0 ? estimate_point_dimension(&ev(t, 0), d, Real(settings.estimator.min_gap_ratio),
                                                                effective_noise_floor<Real>(settings.estimator),
                                                                Real(settings.estimator.first_gap_exponent))
                                     : PointDimension<Real>{};
      rows.values.push_back(double(point.confidence));
      rows.values.push_back(double(point.gap_ratio));
      for (int s = 0; s < scales; ++s) rows.scale_checked.push_back(scale_dim(t, s));
      for (int s = 0; s < scales && spread.local(); ++s) rows.local.push_back(local_dim(t, s));
      if (distances) rows.distance_log.push_back(double(distance_log(t)));
    }
  }
  detail::combine_local_dimension(rows, settings, config.matrix_size(), comm);
  return detail::finish_dimension_analysis(rows, settings.metric, settings.estimator, settings.spread.enabled, comm);
}

// One process.
template <class Real, class ExecSpace, class PointsView>
DimensionAnalysis analyze_dimension(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                                    const PointsView& points, const GeometrySettings& settings, int chunk) {
  SelfCommunicator self;
  return analyze_dimension(exec, config, points, settings, chunk, self);
}

}  // namespace qgml
