// Intrinsic dimension from the spectrum of the quantum metric (docs/math.md 6, "Algorithm 1", made robust;
// docs/dimension.md, "The gap rule", has the cases that motivated each step).
//
// Per point, with the metric eigenvalues sorted descending e_0 >= e_1 >= ... >= e_{D-1}:
//   floor = noise_floor * e_0; the directions are the m eigenvalues above it (e_i > floor);
//   rho_i = e_i / max(e_{i+1}, floor) for the gaps below a direction, i = 0 .. min(m, D - 1) - 1
//     (the last of them, when m < D, is the gap from the smallest direction down to the floor);
//   a gap is significant when rho_i >= max(min_gap_ratio, rho_max^first_gap_exponent);
//   d = 1 + the first significant gap, or d = m when there is none ("no gap": every direction is
//   tangent); d = 0 when e_0 <= 0 (the metric vanishes: no tangent direction).
// first_gap_exponent = 1 takes the largest gap; smaller values prefer an earlier gap that is nearly as
// large on a log scale, since a spurious gap deep in the tail (a near-zero trailing eigenvalue) is
// not a tangent/normal split. The floor keeps eigenvalues that are zero up to rounding, or tiny, from
// counting as directions or producing huge or negative ratios.
//
// Per-point confidence in [0, 1]: with a gap, 1 - log(rho_other) / log(rho_chosen), rho_other the
// largest other ratio (0 when another gap is as large, 1 when the rest of the spectrum is flat);
// without a gap, 1 - log(rho_max) / log(min_gap_ratio) (how far the spectrum is from having one).
#pragma once

#include <Kokkos_Core.hpp>

#include <limits>
#include <string>
#include <vector>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/io/json_fields.hpp"

namespace qgml {

struct DimensionEstimatorSettings {
  double min_gap_ratio = 2.0;        // a gap is a ratio e_i / e_{i+1} at least this large
  double noise_floor = 1e-3;         // eigenvalues at most this times e_0 are not directions
  double first_gap_exponent = 0.75;  // significant: rho >= rho_max^exponent (1: the largest gap only)
};

// The floor a precision can resolve: noise_floor, at least 100 epsilon of Real.
template <class Real>
Real effective_noise_floor(const DimensionEstimatorSettings& s) {
  const double smallest = 100.0 * double(std::numeric_limits<Real>::epsilon());
  return Real(s.noise_floor > smallest ? s.noise_floor : smallest);
}

template <class Real>
struct PointDimension {
  int dimension = 0;
  Real confidence = 0;
  Real gap_ratio = 0;  // rho at the chosen gap; the largest ratio when there is none
};

template <class Real>
KOKKOS_INLINE_FUNCTION PointDimension<Real> estimate_point_dimension(const Real* e, int d, Real min_gap_ratio,
                                                                     Real noise_floor, Real first_gap_exponent) {
  PointDimension<Real> r;
  if (!(e[0] > Real(0))) return r;
  const Real floor = noise_floor * e[0];
  int m = 0;
  while (m < d && e[m] > floor) ++m;
  const int gaps = m < d - 1 ? m : d - 1;
  Real best = Real(1);
  for (int i = 0; i < gaps; ++i) {
    const Real below = e[i + 1] > floor ? e[i + 1] : floor;
    const Real rho = e[i] / below;
    if (rho > best) best = rho;
  }
  const Real preferred = math::exp(first_gap_exponent * math::log(best));
  const Real threshold = preferred > min_gap_ratio ? preferred : min_gap_ratio;
  int chosen = -1;
  Real chosen_rho = Real(1), other = Real(1);
  for (int i = 0; i < gaps; ++i) {
    const Real below = e[i + 1] > floor ? e[i + 1] : floor;
    const Real rho = e[i] / below;
    if (chosen < 0 && rho >= threshold) {
      chosen = i;
      chosen_rho = rho;
    } else if (rho > other) {
      other = rho;
    }
  }
  if (chosen >= 0) {
    r.dimension = chosen + 1;
    r.gap_ratio = chosen_rho;
    const Real c = Real(1) - math::log(other) / math::log(chosen_rho);
    r.confidence = c > Real(0) ? c : Real(0);
  } else {
    r.dimension = m;
    r.gap_ratio = best;
    const Real c = Real(1) - math::log(best) / math::log(min_gap_ratio > Real(1) ? min_gap_ratio : Real(2));
    r.confidence = c > Real(0) ? c : Real(0);
  }
  return r;
}

template <class Real>
KOKKOS_INLINE_FUNCTION int estimate_dimension_from_descending(const Real* e, int d, Real min_gap_ratio,
                                                              Real noise_floor, Real first_gap_exponent) {
  return estimate_point_dimension(e, d, min_gap_ratio, noise_floor, first_gap_exponent).dimension;
}

// The estimator's parameters in Real, as the per-point kernels take them (the floor that Real resolves).
template <class Real>
struct DimensionRule {
  Real min_gap_ratio = 2, noise_floor = Real(1e-3), first_gap_exponent = Real(0.75);

  static DimensionRule from(const DimensionEstimatorSettings& s) {
    return {Real(s.min_gap_ratio), effective_noise_floor<Real>(s), Real(s.first_gap_exponent)};
  }
  // d for the eigenvalues e[0] >= ... >= e[d - 1].
  KOKKOS_INLINE_FUNCTION int operator()(const Real* e, int d) const {
    return estimate_dimension_from_descending(e, d, min_gap_ratio, noise_floor, first_gap_exponent);
  }
};

// The error bar of the global estimate (geometry/dimension_interval.hpp computes it).
struct DimensionInterval {
  int low = -1, high = -1;  // 90 % interval of the resampled modes; -1: not computed
  double error = 0;         // standard deviation of the resampled modes
  double mean_error = 0;    // standard deviation of the bootstrap means of the per-point estimates
  int resamples = 0;        // R; 0: not computed
};

// The estimate at one scale of the spread check (geometry/tangent_spread.hpp; docs/dimension.md, "The
// dimension per scale"): the k nearest neighbours, their mean distance to the k-th (in the analysed
// coordinates), the points with an estimate, the mode of their estimates and the fraction at it.
struct ScaleDimension {
  int neighbours = 0;
  double radius = 0;
  long points = 0;
  int mode = -1;  // -1: no point had an estimate at this scale
  double fraction = 0;
  int local_mode = -1;  // the mode of the local covariance's readings at this scale (-1: none)
};

// One sentence on the scales (ascending): "the same at every scale: ..." or "scale-dependent: d = 1 at
// k = 10 .. 20 (radius 0.02 .. 0.05), d = 2 at k = 50 .. 200 (radius 0.1 .. 0.3)"; empty without scales.
std::string scale_verdict(const std::vector<ScaleDimension>& scales);

// Statistics of per-point estimates: histogram over d = 0 .. D and the derived summary.
//   mode: the most frequent d; among tied counts, the one nearest the median (then the smaller);
//   uncertain: the mode holds less than uncertain_fraction of the points, or the runner-up (the
//   second most frequent d) has at least tie_fraction of the mode's count; `verdict` says which.
struct DimensionSummary {
  int ambient_dimension = 0;
  long points = 0;
  std::vector<long> histogram;  // histogram[d] = number of points with estimate d
  int mode = 0;
  int runner_up = -1;  // the second most frequent d (-1: every point has the mode)
  double median = 0, mean = 0;
  bool uncertain = false;
  std::string verdict;                 // "clear" or "uncertain: <why>"
  DimensionInterval interval;          // set by the analysis that has the per-point spectra
  std::vector<ScaleDimension> scales;  // the dimension per scale, set by the analysis with the spread check
  std::string scale_verdict;           // scale_verdict(scales)
  // The spread check's k, the local covariance's chosen scale (its neighbour count; -1: none;
  // geometry/local_dimension.hpp) and the fraction of the points whose metric had no gap.
  int spread_neighbours = 0;
  int local_scale = -1;
  double no_gap_fraction = 0;
  // The neighbour-distance reading (geometry/local_dimension.hpp): its neighbour count (0: off), the
  // fraction of the points the metric and the local covariance left unresolved, the pooled reading over
  // them (0: none), the value they took (0: not used, fewer than distance_share unresolved) and that
  // share (analysis.distance_share).
  int distance_neighbours = 0;
  double distance_share = 0;
  double unresolved_fraction = 0;
  double distance_reading = 0;
  int distance_dimension = 0;
  std::vector<double> fraction() const;
};

constexpr double uncertain_fraction = 0.5;
constexpr double tie_fraction = 0.75;

DimensionSummary summarize_dimensions(const std::vector<long>& histogram);

// JSON object with D, points, mode, median, mean, histogram and fraction per dimension, the interval when
// it was computed (error, interval [low, high], mean_error, resamples), then the extra
// fields (whose keys must differ from those); atomic write.
void write_dimension_summary_json(const std::string& path, const DimensionSummary& s, const JsonFields& extra = {});

}  // namespace qgml
