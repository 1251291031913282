// The local covariance's reading of the dimension and how it is combined with the metric's
// (docs/dimension.md, "The local covariance").
//
// Per point and scale k' (TangentSpreadSettings::scales), the covariance of the k' nearest data points
// about their mean has eigenvalues l_0 >= l_1 >= ...; the gap rule (dimension_estimate.hpp, minimum ratio
// local_gap, since these are sample variances) reads a dimension d_l(k') from them (tangent_spread.hpp).
// A sample of k' points spans at most k' - 1 directions, and its variances along d filled directions
// scatter (by a factor (1 +- sqrt(d / k'))^2), so that d_l(k') is only a reading of d when d is well below
// k'. The scale: the smallest k' whose mode of d_l over the points satisfies
//     mode <= (k' - 1) / local_consistency.
// Smaller scales are sampling-limited, larger ones see more of the curvature (and of other pieces).
// The combination per point, with d_q the spread-checked metric estimate, rho the metric's gap ratio and
// m its directions (eigenvalues above the noise floor):
//   rho < no_gap_ratio (the metric has no gap: the model does not resolve the data at this N):
//       d = d_l, unless d_l > m while m < 2 (N - 1) - saturation_slack (more directions than the metric
//       has, where it could have had them: the local covariance is then reading curvature or noise);
//   otherwise d = min(d_q, d_l): the data, among their nearest points, do not fill a direction the model
//       follows (a curve wound into a surface the model sees; a curvature normal).
// The metric's rank is at most 2 (N - 1) (math.md, section 6), hence the exception: at that bound the
// count m is N's limit, not the data's.
// The exception leaves a point unresolved: the model does not resolve it and the local covariance reads
// the curvature. Where at least distance_share of all points are unresolved (a manifold too curved for
// the matrices and too sparse for a linear reading: every neighbourhood bends), the unresolved points take
// the neighbour-distance reading instead of d_q: the maximum-likelihood dimension of the distances to
// the k nearest points (Levina and Bickel), pooled over those points,
//     d_r = (k - 1) n / sum_x L(x),   L(x) = sum_{j < k} log(r_k(x) / r_j(x)),
// rounded; it needs no direction, only how the number of neighbours grows with the radius.
// Then one promotion: d <- d + 1 where the metric's next eigenvalue lies in a band of flattened directions
// (noise_floor e_0 < e_d <= local_band e_0, wider than the spread check's band, since the reading below is
// the stronger evidence) and the local covariance reads exactly d + 1 at every scale from the chosen one up
// that resolves its mode (a solid whose last side the model flattens: a high-dimensional ball or cube;
// noise, which fades as the scale grows, reads d + 1 at some scales only).
// Last, the agreement (local_agree): where the local covariance reads the same d_l > d at every resolving
// scale from the chosen one up, d_l < D, and the metric has exactly m = d_l directions above the noise
// floor, d <- d_l. Two readings of the data, one of the model's directions and one of the points', then
// agree against the metric's first gap, which in a spectrum that decays without a gap (a strongly
// nonuniform density: the model follows the dense direction most) can be its first ratio. d_l = D is
// left out: noise fills every direction, and so does the local covariance of noisy data.
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "qgml/geometry/tangent_spread.hpp"

namespace qgml {

inline constexpr int local_dimension_saturation_slack = 4;

// The scale's index among the scales (-1: none reads a dimension): histograms[s * (D + 1) + d] counts
// the points whose local covariance at scale s reads d; effective[s] is the neighbour count the scale
// had (at most the reference points less one).
inline int choose_local_scale(const std::vector<std::int64_t>& histograms, int d, const std::vector<int>& effective,
                              double consistency) {
  const std::size_t width = std::size_t(d) + 1;
  for (std::size_t s = 0; s < effective.size(); ++s) {
    std::int64_t best = 0;
    int mode = -1;
    for (int k = 0; k <= d; ++k) {
      const std::int64_t n = histograms[s * width + std::size_t(k)];
      if (n > best) {
        best = n;
        mode = k;
      }
    }
    if (mode >= 0 && double(mode) <= double(effective[s] - 1) / consistency) return int(s);
  }
  return -1;
}

// Whether each scale resolves its mode (mode <= (effective - 1) / consistency).
inline std::vector<int> resolved_local_scales(const std::vector<std::int64_t>& histograms, int d,
                                              const std::vector<int>& effective, double consistency) {
  std::vector<int> resolved(effective.size(), 0);
  const std::size_t width = std::size_t(d) + 1;
  for (std::size_t s = 0; s < effective.size(); ++s) {
    std::int64_t best = 0;
    int mode = -1;
    for (int k = 0; k <= d; ++k)
      if (histograms[s * width + std::size_t(k)] > best) {
        best = histograms[s * width + std::size_t(k)];
        mode = k;
      }
    resolved[s] = mode >= 0 && double(mode) <= double(effective[s] - 1) / consistency ? 1 : 0;
  }
  return resolved;
}

// The promotion above: e (descending, dims), reading = the local covariance's smallest reading over the
// resolved scales from the chosen one up (-1: none).
KOKKOS_INLINE_FUNCTION int locally_promoted(int estimate, int reading, const double* e, int dims, double floor,
                                            double band) {
  if (estimate < 1 || estimate >= dims || reading != estimate + 1) return estimate;
  return e[estimate] > floor * e[0] && e[estimate] <= band * e[0] ? estimate + 1 : estimate;
}

// The agreement above: reading = the local covariance's reading at the chosen scale, stable = whether it
// reads the same at every resolved scale from the chosen one up, directions = m, dims = D.
KOKKOS_INLINE_FUNCTION int locally_agreed(int estimate, int reading, bool stable, int directions, int dims) {
  return estimate >= 1 && stable && reading > estimate && reading < dims && directions == reading ? reading : estimate;
}

// Whether the combination below leaves the point unresolved (the exception above).
KOKKOS_INLINE_FUNCTION bool locally_unresolved(int checked, int local, double gap_ratio, int directions, int n,
                                               double no_gap_ratio) {
  return checked >= 1 && local >= 1 && gap_ratio < no_gap_ratio && local > directions &&
         directions < 2 * (n - 1) - local_dimension_saturation_slack;
}

// The combination above for one point: checked = d_q (< 1: kept), local = d_l (< 0: none),
// gap_ratio = rho, directions = m, n = N; unresolved = the neighbour-distance reading where it is used
// (< 1: d_q).
KOKKOS_INLINE_FUNCTION int combined_dimension(int checked, int local, double gap_ratio, int directions, int n,
                                              double no_gap_ratio, int unresolved = 0) {
  if (checked < 1 || local < 0) return checked;
  if (local < 1) return checked;  // neighbours that coincide
  if (gap_ratio < no_gap_ratio) {
    if (locally_unresolved(checked, local, gap_ratio, directions, n, no_gap_ratio))
      return unresolved >= 1 ? unresolved : checked;
    return local;
  }
  return local < checked ? local : checked;
}

// The pooled reading above from the sum of L over `points` points (k neighbours each): d_r rounded,
// within 1 .. dims; 0 when there is none.
inline int neighbour_distance_dimension(double log_sum, std::int64_t points, int k, int dims) {
  if (points < 1 || k < 2 || !(log_sum > 0)) return 0;
  const double d = double(k - 1) * double(points) / log_sum;
  const long r = std::lround(d);
  return int(r < 1 ? 1 : (r > dims ? dims : r));
}

}  // namespace qgml
