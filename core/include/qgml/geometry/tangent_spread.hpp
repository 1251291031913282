// The spread check of the gap rule's tangent directions (docs/dimension.md, "The spread check").
//
// The metric g(x) = d xbar / dx (docs/math.md, section 6) says how far the reconstruction follows the
// data in each direction, not whether the data extend in it. Two readings of its spectrum go wrong
// for that reason:
//   - a direction the data fill but the model flattens (the radial direction of a solid ball, the last
//     side of a solid cube: e_j ~ 1e-3 .. 1e-2 e_0) falls below the gap and is not counted;
//   - a normal direction the reconstruction follows a little through the curvature (the radial
//     direction of each circle of a flat torus: e_j ~ 0.1 e_0) lies above the gap and is counted.
// The data decide both. With v_j the metric's eigenvectors (e_0 >= e_1 >= ...), the spread of the
// k nearest data points y_n of x along v_j is s_j = sqrt(mean_n ((y_n - x) . v_j)^2). Starting from
// the gap rule's d (geometry/dimension_estimate.hpp):
//   demote: while d > 1 and s_{d-1} < demote * s_0, d <- d - 1;
//   promote: while d < D, noise_floor * e_0 < e_d <= band * e_0 and either
//              promote * s_0 <= s_d <= promote_max * s_0                                    (it fills like s_0), or
//              s_d >= gap_promote * s_0 and s_d >= gap_below * max_{j > d} s_j             (a gap in the spreads)
//            d <- d + 1
// (a flattened direction's eigenvalue lies in that band, above it the gap rule has already decided; and
// the data fill it as they fill the others, where a normal direction wider than the tangents is the
// curvature of a neighbourhood that is not small, as on a 10-sphere of 2000 points). The second way to
// promote is for high d: with k neighbours in 17 dimensions the tangent spreads scatter by +-30 % and a
// flattened side reads 0.5 s_0, but the directions below it, normal to the data, are an order of magnitude
// narrower (zero without noise).
// k is 2 % of the reference points by default (10 .. 400): the neighbourhood covers the same share of
// the data at every size of data set, so that noise does not outgrow it as the points grow denser.
// The neighbours are searched among a strided subset of at most max_reference of the points analysed
// (every rank's, analyze_dimension.hpp), so that the cost is O(T min(T, max_reference) D), and the k spreads
// cost O(k D^2) per point after one eigensystem of g (linalg/symmetric_tridiagonal_eigensolver.hpp).
//
// The dimension per scale (docs/dimension.md, "The dimension per scale"): the same rule with the spreads
// of the k' nearest points for each k' of `scales` (ascending), from the same sorted neighbours, so that
// a set that is d-dimensional at one scale and d'-dimensional at another (a curve wound into a surface)
// says so. The estimate itself is the rule at k, unchanged by the scales.
//
// The local covariance (docs/dimension.md, "The local covariance"): per scale k', the eigenvalues of the
// covariance of the k' nearest points about their mean (from the k' x k' Gram matrix when k' < D) read by
// the gap rule with a larger minimum ratio (local_gap: these are sample variances); local_dimension.hpp
// chooses the scale and combines that reading with the checked estimate.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/common/explicit_instances.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/memory_budget.hpp"
#include "qgml/common/types.hpp"
#include "qgml/geometry/dimension_estimate.hpp"
#include "qgml/linalg/symmetric_tridiagonal_eigensolver.hpp"

namespace qgml {

struct TangentSpreadSettings {
  bool enabled = true;
  int neighbours = 0;    // k; 0: automatic (resolve_spread_neighbours)
  double promote = 0.7;  // a direction below the gap counts when promote s_0 <= s_j <= promote_max s_0
  double promote_max = 1.1;
  double gap_below = 3;  // ... or when s_j >= gap_promote s_0 and s_j >= gap_below max_{i > j} s_i (0: off)
  double gap_promote = 0.3;
  double demote = 0.4;       // a direction above the gap does not count when s_j < demote s_0
  double band = 0.02;        // ... and when e_j <= band e_0
  int max_reference = 4096;  // neighbours are searched among at most this many points
  // The neighbour counts of the dimension per scale and of the local covariance (ascending, at most
  // max_scales; empty: neither).
  std::vector<int> scales = {10, 20, 50, 100, 200, 400};
  bool local = true;             // the local covariance (local_dimension.hpp)
  double local_gap = 4;          // its gap rule's minimum ratio (of variances)
  double local_consistency = 2;  // a scale k' reads d when d <= (k' - 1) / local_consistency
  double local_band = 0.05;      // its promotion to d + 1 needs e_d <= local_band e_0 (local_dimension.hpp)
  bool local_agree = true;       // its stable reading wins where the metric has as many directions (same)
  double no_gap_ratio = 3;       // a metric whose gap ratio is below this has no gap
  // The neighbour-distance reading (local_dimension.hpp): its neighbour count (0: off) and the share of
  // the points that the metric and the local covariance leave unresolved from which it is used.
  int distance_neighbours = 10;
  double distance_share = 0.5;
  static constexpr int max_scales = 8;
};

// Points analysed with a strided subset of at most max_reference of `count` points as neighbours.
inline int tangent_spread_stride(std::int64_t count, int max_reference) {
  const std::int64_t m = std::max(1, max_reference);
  return int(std::max<std::int64_t>(1, (count + m - 1) / m));
}

// The automatic k: 2 % of the reference points (the strided subset of the `total` points analysed, every
// rank's, among which neighbours are searched), within 10 .. 400.
inline constexpr double spread_neighbours_fraction = 0.02;
inline constexpr int spread_neighbours_min = 10, spread_neighbours_max = 400;
inline int resolve_spread_neighbours(int configured, std::int64_t total, int max_reference) {
  if (configured > 0) return configured;
  const std::int64_t stride = tangent_spread_stride(total, max_reference);
  const double k = spread_neighbours_fraction * double((total + stride - 1) / stride);
  return int(std::min<double>(spread_neighbours_max, std::max<double>(spread_neighbours_min, std::floor(k + 0.5))));
}

// gap_below = 0 leaves the second way to promote out.
template <class Real>
KOKKOS_INLINE_FUNCTION int spread_checked_dimension(const Real* e, const Real* s, int dims, int d, Real floor,
                                                    Real ceiling, Real promote, Real promote_max, Real demote,
                                                    Real gap_below = 0, Real gap_promote = 0) {
  if (d < 1 || !(s[0] > Real(0))) return d;
  const Real ref = s[0];
  while (d > 1 && s[d - 1] < demote * ref) --d;
  while (d < dims && e[d] > floor && e[d] <= ceiling) {
    bool fills = s[d] >= promote * ref && s[d] <= promote_max * ref;
    if (!fills && gap_below > Real(0) && d + 1 < dims && s[d] >= gap_promote * ref) {
      Real below = 0;
      for (int j = d + 1; j < dims; ++j) below = s[j] > below ? s[j] : below;
      fills = s[d] >= gap_below * below;
    }
    if (!fills) break;
    ++d;
  }
  return d;
}

// The gap rule's reading of a spectrum of sample variances (descending, dims values, those beyond size
// zero): negative rounding clipped to zero.
template <class Real>
KOKKOS_INLINE_FUNCTION int local_spectrum_dimension(Real* spectrum, int size, int dims, Real min_gap_ratio,
                                                    Real noise_floor, Real first_gap_exponent) {
  for (int i = 0; i < size; ++i) spectrum[i] = spectrum[i] > Real(0) ? spectrum[i] : Real(0);
  for (int i = size; i < dims; ++i) spectrum[i] = 0;
  return estimate_point_dimension(spectrum, dims, min_gap_ratio, noise_floor, first_gap_exponent).dimension;
}

// The gap rule's reading of the covariance of the first n of `neighbour` (indices into all) about their
// mean, from the k x k Gram matrix of the centred points (n < dims: it has the covariance's nonzero
// eigenvalues). mean (dims reals), work (at least n x n, overwritten), spectrum (dims reals), tri (3 n).
template <class Real, class AllView, class NeighbourRow, class WorkMatrix>
KOKKOS_FUNCTION int local_gram_dimension(const AllView& all, const NeighbourRow& neighbour, int n, int dims, Real* mean,
                                         const WorkMatrix& work, Real* spectrum, Real* tri, Real min_gap_ratio,
                                         Real noise_floor, Real first_gap_exponent) {
  if (n < 2) return 0;  // no spread at all
  for (int i = 0; i < dims; ++i) mean[i] = 0;
  for (int a = 0; a < n; ++a)
    for (int i = 0; i < dims; ++i) mean[i] += Real(all(neighbour(a), i));
  for (int i = 0; i < dims; ++i) mean[i] /= Real(n);
  const Real inv = Real(1) / Real(n);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b <= a; ++b) {
      Real g = 0;
      for (int i = 0; i < dims; ++i)
        g += (Real(all(neighbour(a), i)) - mean[i]) * (Real(all(neighbour(b), i)) - mean[i]);
      work(a, b) = g * inv;
    }
  linalg::symmetric_eigenvalues_tridiagonal_descending(work, n, spectrum, tri);
  return local_spectrum_dimension(spectrum, n, dims, min_gap_ratio, noise_floor, first_gap_exponent);
}

// The same from the moments about the point x of the first n neighbours, sum (dims: sum_a z_a) and
// moment (lower triangle of sum_a z_a z_a^T), z_a = y_a - x: cov = moment / n - (sum / n)(sum / n)^T.
template <class Real, class MomentMatrix, class WorkMatrix>
KOKKOS_FUNCTION int local_moment_dimension(const MomentMatrix& moment, const Real* sum, int n, int dims,
                                           const WorkMatrix& work, Real* spectrum, Real* tri, Real min_gap_ratio,
                                           Real noise_floor, Real first_gap_exponent) {
  if (n < 2) return 0;
  const Real inv = Real(1) / Real(n);
  for (int i = 0; i < dims; ++i)
    for (int j = 0; j <= i; ++j) work(i, j) = Real(moment(i, j)) * inv - (sum[i] * inv) * (sum[j] * inv);
  linalg::symmetric_eigenvalues_tridiagonal_descending(work, dims, spectrum, tri);
  return local_spectrum_dimension(spectrum, dims, dims, min_gap_ratio, noise_floor, first_gap_exponent);
}

// The neighbour-distance statistic of one point (local_dimension.hpp): with r_1 <= ... <= r_k the
// distances of its k nearest points (squared distances given), L = sum_{j < k} log(r_k / r_j); -1 where
// it is undefined (k < 2, coinciding points, all k at one distance).
template <class Real>
KOKKOS_INLINE_FUNCTION Real neighbour_distance_log(const Real* squared, int k) {
  if (k < 2 || !(squared[0] > Real(0)) || !(squared[k - 1] > squared[0])) return Real(-1);
  Real sum = 0;
  for (int j = 0; j + 1 < k; ++j) sum += math::log(squared[k - 1] / squared[j]);
  return sum / Real(2);
}

namespace detail {

// One thread per point t of a chunk (global index first + t among `all`): its `search` nearest reference
// points (all(r * stride), r != the point itself), sorted by distance; the eigensystem of its metric
// (overwritten); the spreads of the k nearest; the checked estimate in place of dimension(t); per scale s,
// the estimate, the distance of the scale_k[s]-th neighbour and (local) the local covariance's reading.
template <class Real, class MemorySpace, class AllView, class ChunkView>
struct TangentSpreadFunctor {
  using matrix = Kokkos::View<Real***, Kokkos::LayoutRight, MemorySpace>;
  AllView all;      // count x D, this rank's points
  ChunkView chunk;  // m x D, the chunk's points (rows first .. first + m of all)
  std::int64_t first = 0, count = 0;
  int stride = 1, k = 0, search = 0, dims = 0, scales = 0;
  bool local = false;
  Kokkos::Array<int, TangentSpreadSettings::max_scales> scale_k;
  matrix metric, vectors, scale_spread;
  Kokkos::View<Real**, Kokkos::LayoutRight, MemorySpace> eigen, spread, distance, scale_radius, local_work;
  Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace> neighbour, scale_dimension, local_dimension;
  Kokkos::View<Real*, MemorySpace> distance_log;
  int distance_k = 0;
  IntVector<MemorySpace> dimension;
  Real noise_floor = 0, band = 0, promote = 0, promote_max = 0, demote = 0, gap_below = 0, gap_promote = 0;
  Real local_gap = 0, first_gap_exponent = 0;

  KOKKOS_FUNCTION int checked(const int t, const Real* s, const int gap) const {
    const Real e0 = eigen(t, 0);
    return spread_checked_dimension(&eigen(t, 0), s, dims, gap, noise_floor * e0, band * e0, promote, promote_max,
                                    demote, gap_below, gap_promote);
  }

  KOKKOS_FUNCTION void operator()(const int t) const {
    for (int s = 0; s < scales; ++s) scale_dimension(t, s) = -1;
    for (int s = 0; s < scales && local; ++s) local_dimension(t, s) = -1;
    if (distance_k > 0) distance_log(t) = -1;
    if (dimension(t) < 1) return;
    const std::int64_t self = first + t;
    int found = 0;
    for (std::int64_t r = 0; r < count; r += stride) {
      if (r == self) continue;
      Real dist = 0;
      for (int i = 0; i < dims; ++i) {
        const Real z = Real(all(r, i)) - Real(chunk(t, i));
        dist += z * z;
      }
      if (found == search && !(dist < distance(t, search - 1))) continue;
      int j = found < search ? found++ : search - 1;
      while (j > 0 && distance(t, j - 1) > dist) {
        distance(t, j) = distance(t, j - 1);
        neighbour(t, j) = neighbour(t, j - 1);
        --j;
      }
      distance(t, j) = dist;
      neighbour(t, j) = int(r);
    }
    if (found < 1) return;
    if (distance_k > 0)
      distance_log(t) = neighbour_distance_log(&distance(t, 0), distance_k < found ? distance_k : found);
    auto a = Kokkos::subview(metric, t, Kokkos::ALL, Kokkos::ALL);
    auto v = Kokkos::subview(vectors, t, Kokkos::ALL, Kokkos::ALL);
    if (!linalg::symmetric_eigensystem_tridiagonal_descending(a, v, dims, &eigen(t, 0), &local_work(t, 0))) return;
    // The spreads over the first n neighbours are prefix sums in distance order: the k of the estimate
    // and every scale's from one pass. Per neighbour y, the projections (y - x)^T v_j of every j at once
    // (summed over i in order), the squares summed over the neighbours in order.
    const int kk = k < found ? k : found;
    Real* proj = &local_work(t, 0);
    Real* squares = proj + dims;
    for (int j = 0; j < dims; ++j) squares[j] = 0;
    for (int n = 0, s = 0; n < found; ++n) {
      const int y = neighbour(t, n);
      for (int j = 0; j < dims; ++j) proj[j] = 0;
      for (int i = 0; i < dims; ++i) {
        const Real z = Real(all(y, i)) - Real(chunk(t, i));
        for (int j = 0; j < dims; ++j) proj[j] += z * v(i, j);
      }
      for (int j = 0; j < dims; ++j) squares[j] += proj[j] * proj[j];
      if (n + 1 == kk)
        for (int j = 0; j < dims; ++j) spread(t, j) = math::sqrt(squares[j] / Real(kk));
      for (; s < scales && (scale_k[s] == n + 1 || (n + 1 == found && scale_k[s] > found)); ++s)
        for (int j = 0; j < dims; ++j) scale_spread(t, s, j) = math::sqrt(squares[j] / Real(n + 1));
    }
    const int gap = dimension(t);
    dimension(t) = checked(t, &spread(t, 0), gap);
    for (int s = 0; s < scales; ++s) {
      const int ks = scale_k[s] < found ? scale_k[s] : found;
      scale_radius(t, s) = math::sqrt(distance(t, ks - 1));
      scale_dimension(t, s) = checked(t, &scale_spread(t, s, 0), gap);
    }
    if (!local) return;
    // The metric and its eigenvectors are read: their storage holds the moments and the work matrix.
    const auto near = Kokkos::subview(neighbour, t, Kokkos::ALL);
    Real* sum = &local_work(t, 0);
    Real* spectrum = sum + dims;
    Real* tri = sum + 2 * dims;
    int s = 0;
    for (; s < scales; ++s) {  // the Gram matrix while k' < D
      const int ks = scale_k[s] < found ? scale_k[s] : found;
      if (ks >= dims) break;
      local_dimension(t, s) =
          local_gram_dimension(all, near, ks, dims, sum, v, spectrum, tri, local_gap, noise_floor, first_gap_exponent);
    }
    if (s == scales) return;
    for (int i = 0; i < dims; ++i) {
      sum[i] = 0;
      for (int j = 0; j <= i; ++j) a(i, j) = 0;
    }
    Real* z = spectrum;                              // y - x of one neighbour, until the scale's spectrum overwrites it
    for (int n = 0; n < found && s < scales; ++n) {  // the moments in distance order, read at each scale
      for (int i = 0; i < dims; ++i) z[i] = Real(all(near(n), i)) - Real(chunk(t, i));
      for (int i = 0; i < dims; ++i) {
        sum[i] += z[i];
        for (int j = 0; j <= i; ++j) a(i, j) += z[i] * z[j];
      }
      for (; s < scales && (scale_k[s] == n + 1 || (n + 1 == found && scale_k[s] > found)); ++s)
        local_dimension(t, s) =
            local_moment_dimension(a, sum, n + 1, dims, v, spectrum, tri, local_gap, noise_floor, first_gap_exponent);
    }
  }
};

}  // namespace detail

// The neighbours searched for: k and every scale's (k resolved for `total` points).
inline int tangent_spread_search(const TangentSpreadSettings& s, std::int64_t total = 0) {
  int k = std::max(1, resolve_spread_neighbours(s.neighbours, total, s.max_reference));
  if (s.neighbours <= 0 && total <= 0) k = spread_neighbours_max;  // automatic, for any number of points
  for (int scale : s.scales) k = std::max(k, scale);
  k = std::max(k, s.distance_neighbours);
  return k;
}

// Throws unless the scales are at most max_scales neighbour counts >= 1, strictly ascending.
inline void check_tangent_spread_scales(const TangentSpreadSettings& s) {
  QGML_REQUIRE(int(s.scales.size()) <= TangentSpreadSettings::max_scales,
               "qgml: at most " + std::to_string(TangentSpreadSettings::max_scales) + " scales, got " +
                   std::to_string(s.scales.size()));
  for (std::size_t i = 0; i < s.scales.size(); ++i)
    QGML_REQUIRE(s.scales[i] >= 1 && (i == 0 || s.scales[i] > s.scales[i - 1]),
                 "qgml: the scales must be neighbour counts >= 1 in ascending order, got " +
                     std::to_string(s.scales[i]) + " at position " + std::to_string(i + 1));
}

// Buffers of the check for chunks of at most max_batch points, allocated once; `total` is the number
// of points analysed (every rank's), which the automatic k follows.
template <class Real, class ExecSpace>
class TangentSpreadCheck {
 public:
  using memory_space = typename ExecSpace::memory_space;
  using matrix = Kokkos::View<Real***, Kokkos::LayoutRight, memory_space>;

  TangentSpreadCheck(int d, int max_batch, const TangentSpreadSettings& s, std::int64_t total = 0)
      : d_(d),
        k_(std::max(1, resolve_spread_neighbours(s.neighbours, total, s.max_reference))),
        search_(tangent_spread_search(s, total)),
        scales_(s.enabled ? int(s.scales.size()) : 0),
        local_(s.enabled && s.local && !s.scales.empty()),
        vectors_("qgml::TangentSpreadCheck::vectors", s.enabled ? max_batch : 0, d, d),
        scale_spread_("qgml::TangentSpreadCheck::scale_spread", s.enabled ? max_batch : 0, scales_, d),
        eigen_("qgml::TangentSpreadCheck::eigenvalues", s.enabled ? max_batch : 0, d),
        spread_("qgml::TangentSpreadCheck::spread", s.enabled ? max_batch : 0, d),
        distance_("qgml::TangentSpreadCheck::distance", s.enabled ? max_batch : 0, search_),
        scale_radius_("qgml::TangentSpreadCheck::scale_radius", s.enabled ? max_batch : 0, scales_),
        local_work_("qgml::TangentSpreadCheck::work", s.enabled ? max_batch : 0, 5 * d),
        neighbour_("qgml::TangentSpreadCheck::neighbour", s.enabled ? max_batch : 0, search_),
        scale_dimension_("qgml::TangentSpreadCheck::scale_dimension", s.enabled ? max_batch : 0, scales_),
        local_dimension_("qgml::TangentSpreadCheck::local_dimension", local_ ? max_batch : 0, local_ ? scales_ : 0),
        distance_log_("qgml::TangentSpreadCheck::distance_log",
                      s.enabled && s.distance_neighbours > 0 ? max_batch : 0) {
    check_tangent_spread_scales(s);
    for (int i = 0; i < scales_; ++i) scale_k_[i] = s.scales[std::size_t(i)];
  }

  // The bytes of the buffers above (the pre-flight check of the analysis).
  static double needs_bytes(int d, int max_batch, const TangentSpreadSettings& s, std::int64_t total = 0) {
    if (!s.enabled) return 0;
    const std::size_t c = std::size_t(std::max(1, max_batch)), dd = std::size_t(d),
                      k = std::size_t(tangent_spread_search(s, total)), sc = s.scales.size();
    const bool local = s.local && sc > 0;
    return double(view_allocation_bytes(c * dd * dd, sizeof(Real))) +
           double(view_allocation_bytes(c * sc * dd, sizeof(Real))) +
           2 * double(view_allocation_bytes(c * dd, sizeof(Real))) +
           double(view_allocation_bytes(c * k, sizeof(Real))) + double(view_allocation_bytes(c * sc, sizeof(Real))) +
           double(view_allocation_bytes(c * k, sizeof(int))) + double(view_allocation_bytes(c * sc, sizeof(int))) +
           double(view_allocation_bytes(c * 5 * dd, sizeof(Real))) +
           (local ? double(view_allocation_bytes(c * sc, sizeof(int))) : 0.0) +
           (s.distance_neighbours > 0 ? double(view_allocation_bytes(c, sizeof(Real))) : 0.0);
  }

  int scales() const { return scales_; }
  bool local() const { return local_; }
  int neighbours() const { return k_; }
  // Per point of the last chunk and scale: the estimate (-1: none) and the distance of the scale's
  // farthest neighbour; the local covariance's reading (-1: none; local() only).
  const Kokkos::View<int**, Kokkos::LayoutRight, memory_space>& scale_dimension() const { return scale_dimension_; }
  const Kokkos::View<Real**, Kokkos::LayoutRight, memory_space>& scale_radius() const { return scale_radius_; }
  const Kokkos::View<int**, Kokkos::LayoutRight, memory_space>& local_dimension() const { return local_dimension_; }
  // Per point of the last chunk: neighbour_distance_log over its distance_neighbours nearest points (-1:
  // undefined; empty when the reading is off).
  const Kokkos::View<Real*, memory_space>& distance_log() const { return distance_log_; }
  // The spreads s_j of the last chunk along the metric's eigenvectors (eigenvalues descending) over the k
  // nearest points, sqrt(mean_a ((y_a - x)^T v_j)^2), and over each scale's (point, scale, j).
  const Kokkos::View<Real**, Kokkos::LayoutRight, memory_space>& spread() const { return spread_; }
  const matrix& scale_spread() const { return scale_spread_; }

  // The checked estimates of the chunk (rows first .. first + chunk.extent(0) of all) in place of
  // dimension; metric (chunk x D x D, the chunk's metrics) is overwritten. Asynchronous on exec.
  // Out of the class (below), so that its explicit instances (end of this file) are what programs link.
  template <class AllView, class ChunkView, class DimensionView>
  void apply(const ExecSpace& exec, const AllView& all, const ChunkView& chunk, std::int64_t first,
             const matrix& metric, const DimensionView& dimension, const TangentSpreadSettings& s,
             const DimensionEstimatorSettings& estimator);

 private:
  int d_, k_, search_, scales_;
  bool local_;
  Kokkos::Array<int, TangentSpreadSettings::max_scales> scale_k_{};
  matrix vectors_, scale_spread_;
  Kokkos::View<Real**, Kokkos::LayoutRight, memory_space> eigen_, spread_, distance_, scale_radius_, local_work_;
  Kokkos::View<int**, Kokkos::LayoutRight, memory_space> neighbour_, scale_dimension_, local_dimension_;
  Kokkos::View<Real*, memory_space> distance_log_;
};

template <class Real, class ExecSpace>
template <class AllView, class ChunkView, class DimensionView>
void TangentSpreadCheck<Real, ExecSpace>::apply(const ExecSpace& exec, const AllView& all, const ChunkView& chunk,
                                                std::int64_t first, const matrix& metric,
                                                const DimensionView& dimension, const TangentSpreadSettings& s,
                                                const DimensionEstimatorSettings& estimator) {
  if (!s.enabled) return;
  const int m = int(chunk.extent(0));
  const std::int64_t count = std::int64_t(all.extent(0));
  const int stride = tangent_spread_stride(count, s.max_reference);
  const std::int64_t reference = (count + stride - 1) / stride;
  const int k = int(std::min<std::int64_t>(k_, reference - 1));
  const int search = int(std::min<std::int64_t>(search_, reference - 1));
  if (m == 0) return;
  if (k < 1) {  // no neighbour to look at: the estimates stay, no scale has one
    if (scales_ > 0) Kokkos::deep_copy(exec, scale_dimension_, -1);
    if (local_) Kokkos::deep_copy(exec, local_dimension_, -1);
    if (distance_log_.extent(0) > 0) Kokkos::deep_copy(exec, distance_log_, Real(-1));
    return;
  }
  detail::TangentSpreadFunctor<Real, memory_space, AllView, ChunkView> f;
  f.all = all;
  f.chunk = chunk;
  f.first = first;
  f.count = count;
  f.stride = stride;
  f.k = k;
  f.search = search;
  f.dims = d_;
  f.scales = scales_;
  f.local = local_;
  f.scale_k = scale_k_;
  f.metric = metric;
  f.vectors = vectors_;
  f.scale_spread = scale_spread_;
  f.scale_radius = scale_radius_;
  f.scale_dimension = scale_dimension_;
  f.local_dimension = local_dimension_;
  f.local_work = local_work_;
  f.eigen = eigen_;
  f.spread = spread_;
  f.distance = distance_;
  f.neighbour = neighbour_;
  f.dimension = dimension;
  f.distance_log = distance_log_;
  f.distance_k = distance_log_.extent(0) > 0 ? std::min(s.distance_neighbours, search) : 0;
  f.noise_floor = effective_noise_floor<Real>(estimator);
  f.first_gap_exponent = Real(estimator.first_gap_exponent);
  f.band = Real(s.band);
  f.promote = Real(s.promote);
  f.promote_max = Real(s.promote_max);
  f.demote = Real(s.demote);
  f.gap_below = Real(s.gap_below);
  f.gap_promote = Real(s.gap_promote);
  f.local_gap = Real(s.local_gap);
  Kokkos::parallel_for("qgml::TangentSpreadCheck::apply", Kokkos::RangePolicy<ExecSpace>(exec, 0, m), f);
}

// Explicit instances (common/explicit_instances.hpp): the reference points in the space's memory, the
// chunk as rows of such points or of the caller's host array; defined with QuantumGeometry's.
#define QGML_TANGENT_SPREAD_POINTS(E, Real, Space, Chunk)                                                      \
  E template void TangentSpreadCheck<Real, Space>::apply<                                                      \
      instances::Points<Real, Space>, instances::Chunk<Real, Space>, IntVector<typename Space::memory_space>>( \
      const Space&, const instances::Points<Real, Space>&, const instances::Chunk<Real, Space>&, std::int64_t, \
      const TangentSpreadCheck<Real, Space>::matrix&, const IntVector<typename Space::memory_space>&,          \
      const TangentSpreadSettings&, const DimensionEstimatorSettings&);
#define QGML_TANGENT_SPREAD_INSTANCE(E, Real, Space, H) \
  QGML_TANGENT_SPREAD_POINTS(E, Real, Space, PointRows) \
  H(QGML_TANGENT_SPREAD_POINTS(E, Real, Space, HostArrayRows))
QGML_FOR_EACH_INSTANCE(QGML_TANGENT_SPREAD_INSTANCE, extern)

}  // namespace qgml
