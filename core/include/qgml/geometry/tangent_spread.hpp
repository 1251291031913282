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
//   promote: while d < D, noise_floor * e_0 < e_d <= band * e_0 and promote * s_0 <= s_d <= promote_max * s_0,
//            d <- d + 1
// (a flattened direction's eigenvalue lies in that band, above it the gap rule has already decided; and
// the data fill it as they fill the others, where a normal direction wider than the tangents is the
// curvature of a neighbourhood that is not small, as on a 10-sphere of 2000 points).
// The neighbours are searched among a strided subset of at most max_reference of the points analysed
// (every rank's, analyze_dimension.hpp), so that the cost is O(T min(T, max_reference) D), and the k spreads
// cost O(k D^2) per point after one Jacobi eigensystem of g (linalg/symmetric_eigensystem.hpp).
//
// The dimension per scale (docs/dimension.md, "The dimension per scale"): the same rule with the spreads
// of the k' nearest points for each k' of `scales` (ascending), from the same sorted neighbours, so that
// a set that is d-dimensional at one scale and d'-dimensional at another (a curve wound into a surface)
// says so. The estimate itself is the rule at k, unchanged by the scales.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/memory_budget.hpp"
#include "qgml/common/types.hpp"
#include "qgml/linalg/symmetric_eigensystem.hpp"

namespace qgml {

struct TangentSpreadSettings {
  bool enabled = true;
  int neighbours = 50;   // k
  double promote = 0.7;  // a direction below the gap counts when promote s_0 <= s_j <= promote_max s_0
  double promote_max = 1.1;
  double demote = 0.4;        // a direction above the gap does not count when s_j < demote s_0
  double band = 0.02;         // ... and when e_j <= band e_0
  int max_reference = 16384;  // neighbours are searched among at most this many points
  // The neighbour counts of the dimension per scale (ascending, at most max_scales; empty: none).
  std::vector<int> scales = {10, 20, 50, 100, 200};
  static constexpr int max_scales = 8;
};

// The rule above for one point: e (descending, D), s (the spreads along the eigenvectors of e, D),
// d the gap rule's estimate (returned unchanged when < 1), floor = noise_floor * e_0, ceiling = band * e_0.
template <class Real>
KOKKOS_INLINE_FUNCTION int spread_checked_dimension(const Real* e, const Real* s, int dims, int d, Real floor,
                                                    Real ceiling, Real promote, Real promote_max, Real demote) {
  if (d < 1 || !(s[0] > Real(0))) return d;
  const Real ref = s[0];
  while (d > 1 && s[d - 1] < demote * ref) --d;
  while (d < dims && e[d] > floor && e[d] <= ceiling && s[d] >= promote * ref && s[d] <= promote_max * ref) ++d;
  return d;
}

// Points analysed with a strided subset of at most max_reference of `count` points as neighbours.
inline int tangent_spread_stride(std::int64_t count, int max_reference) {
  const std::int64_t m = std::max(1, max_reference);
  return int(std::max<std::int64_t>(1, (count + m - 1) / m));
}

namespace detail {

// One thread per point t of a chunk (global index first + t among `all`): its `search` nearest reference
// points (all(r * stride), r != the point itself), sorted by distance; the eigensystem of its metric
// (overwritten); the spreads of the k nearest; the checked estimate in place of dimension(t); per scale s,
// the estimate and the distance of the scale_k[s]-th neighbour.
template <class Real, class MemorySpace, class AllView, class ChunkView>
struct TangentSpreadFunctor {
  using matrix = Kokkos::View<Real***, Kokkos::LayoutRight, MemorySpace>;
  AllView all;      // count x D, this rank's points
  ChunkView chunk;  // m x D, the chunk's points (rows first .. first + m of all)
  std::int64_t first = 0, count = 0;
  int stride = 1, k = 0, search = 0, dims = 0, scales = 0;
  Kokkos::Array<int, TangentSpreadSettings::max_scales> scale_k;
  matrix metric, vectors, scale_spread;
  Kokkos::View<Real**, Kokkos::LayoutRight, MemorySpace> eigen, spread, distance, scale_radius;
  Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace> neighbour, order, scale_dimension;
  IntVector<MemorySpace> dimension;
  Real noise_floor = 0, band = 0, promote = 0, promote_max = 0, demote = 0;

  KOKKOS_FUNCTION void operator()(const int t) const {
    for (int s = 0; s < scales; ++s) scale_dimension(t, s) = -1;
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
    auto a = Kokkos::subview(metric, t, Kokkos::ALL, Kokkos::ALL);
    auto v = Kokkos::subview(vectors, t, Kokkos::ALL, Kokkos::ALL);
    auto e = Kokkos::subview(eigen, t, Kokkos::ALL);
    auto o = Kokkos::subview(order, t, Kokkos::ALL);
    if (linalg::symmetric_eigensystem_descending(a, v, e, o) > linalg::symmetric_eigenvalues_max_sweeps) return;
    // The spreads over the first n neighbours are prefix sums in distance order: the k of the estimate
    // and every scale's from one pass.
    const int kk = k < found ? k : found;
    for (int j = 0; j < dims; ++j) {
      Real sum = 0;
      int s = 0;
      for (int n = 0; n < found; ++n) {
        Real proj = 0;
        for (int i = 0; i < dims; ++i) proj += (Real(all(neighbour(t, n), i)) - Real(chunk(t, i))) * v(i, j);
        sum += proj * proj;
        if (n + 1 == kk) spread(t, j) = math::sqrt(sum / Real(kk));
        for (; s < scales && (scale_k[s] == n + 1 || (n + 1 == found && scale_k[s] > found)); ++s)
          scale_spread(t, s, j) = math::sqrt(sum / Real(n + 1));
      }
    }
    const int gap = dimension(t);
    const Real lowest = noise_floor * e(0), highest = band * e(0);
    dimension(t) =
        spread_checked_dimension(&eigen(t, 0), &spread(t, 0), dims, gap, lowest, highest, promote, promote_max, demote);
    for (int s = 0; s < scales; ++s) {
      const int ks = scale_k[s] < found ? scale_k[s] : found;
      scale_radius(t, s) = math::sqrt(distance(t, ks - 1));
      scale_dimension(t, s) = spread_checked_dimension(&eigen(t, 0), &scale_spread(t, s, 0), dims, gap, lowest, highest,
                                                       promote, promote_max, demote);
    }
  }
};

}  // namespace detail

// The neighbours searched for: k and every scale's.
inline int tangent_spread_search(const TangentSpreadSettings& s) {
  int k = std::max(1, s.neighbours);
  for (int scale : s.scales) k = std::max(k, scale);
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

// Buffers of the check for chunks of at most max_batch points, allocated once.
template <class Real, class ExecSpace>
class TangentSpreadCheck {
 public:
  using memory_space = typename ExecSpace::memory_space;
  using matrix = Kokkos::View<Real***, Kokkos::LayoutRight, memory_space>;

  TangentSpreadCheck(int d, int max_batch, const TangentSpreadSettings& s)
      : d_(d),
        k_(std::max(1, s.neighbours)),
        search_(tangent_spread_search(s)),
        scales_(s.enabled ? int(s.scales.size()) : 0),
        vectors_("qgml::TangentSpreadCheck::vectors", s.enabled ? max_batch : 0, d, d),
        scale_spread_("qgml::TangentSpreadCheck::scale_spread", s.enabled ? max_batch : 0, scales_, d),
        eigen_("qgml::TangentSpreadCheck::eigenvalues", s.enabled ? max_batch : 0, d),
        spread_("qgml::TangentSpreadCheck::spread", s.enabled ? max_batch : 0, d),
        distance_("qgml::TangentSpreadCheck::distance", s.enabled ? max_batch : 0, search_),
        scale_radius_("qgml::TangentSpreadCheck::scale_radius", s.enabled ? max_batch : 0, scales_),
        neighbour_("qgml::TangentSpreadCheck::neighbour", s.enabled ? max_batch : 0, search_),
        order_("qgml::TangentSpreadCheck::order", s.enabled ? max_batch : 0, d),
        scale_dimension_("qgml::TangentSpreadCheck::scale_dimension", s.enabled ? max_batch : 0, scales_) {
    check_tangent_spread_scales(s);
    for (int i = 0; i < scales_; ++i) scale_k_[i] = s.scales[std::size_t(i)];
  }

  // The bytes of the buffers above (the pre-flight check of the analysis).
  static double needs_bytes(int d, int max_batch, const TangentSpreadSettings& s) {
    if (!s.enabled) return 0;
    const std::size_t c = std::size_t(std::max(1, max_batch)), dd = std::size_t(d),
                      k = std::size_t(tangent_spread_search(s)), sc = s.scales.size();
    return double(view_allocation_bytes(c * dd * dd, sizeof(Real))) +
           double(view_allocation_bytes(c * sc * dd, sizeof(Real))) +
           2 * double(view_allocation_bytes(c * dd, sizeof(Real))) +
           double(view_allocation_bytes(c * k, sizeof(Real))) + double(view_allocation_bytes(c * sc, sizeof(Real))) +
           double(view_allocation_bytes(c * k, sizeof(int))) + double(view_allocation_bytes(c * dd, sizeof(int))) +
           double(view_allocation_bytes(c * sc, sizeof(int)));
  }

  int scales() const { return scales_; }
  // Per point of the last chunk and scale: the estimate (-1: none) and the distance of the scale's
  // farthest neighbour.
  const Kokkos::View<int**, Kokkos::LayoutRight, memory_space>& scale_dimension() const { return scale_dimension_; }
  const Kokkos::View<Real**, Kokkos::LayoutRight, memory_space>& scale_radius() const { return scale_radius_; }

  // The checked estimates of the chunk (rows first .. first + chunk.extent(0) of all) in place of
  // dimension; metric (chunk x D x D, the chunk's metrics) is overwritten. Asynchronous on exec.
  template <class AllView, class ChunkView, class DimensionView>
  void apply(const ExecSpace& exec, const AllView& all, const ChunkView& chunk, std::int64_t first,
             const matrix& metric, const DimensionView& dimension, const TangentSpreadSettings& s, double noise_floor) {
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
    f.scale_k = scale_k_;
    f.metric = metric;
    f.vectors = vectors_;
    f.scale_spread = scale_spread_;
    f.scale_radius = scale_radius_;
    f.scale_dimension = scale_dimension_;
    f.eigen = eigen_;
    f.spread = spread_;
    f.distance = distance_;
    f.neighbour = neighbour_;
    f.order = order_;
    f.dimension = dimension;
    f.noise_floor = Real(noise_floor);
    f.band = Real(s.band);
    f.promote = Real(s.promote);
    f.promote_max = Real(s.promote_max);
    f.demote = Real(s.demote);
    Kokkos::parallel_for("qgml::TangentSpreadCheck::apply", Kokkos::RangePolicy<ExecSpace>(exec, 0, m), f);
  }

 private:
  int d_, k_, search_, scales_;
  Kokkos::Array<int, TangentSpreadSettings::max_scales> scale_k_{};
  matrix vectors_, scale_spread_;
  Kokkos::View<Real**, Kokkos::LayoutRight, memory_space> eigen_, spread_, distance_, scale_radius_;
  Kokkos::View<int**, Kokkos::LayoutRight, memory_space> neighbour_, order_, scale_dimension_;
};

}  // namespace qgml
