// The uncertainty of the global dimension estimate (docs/dimension.md, "Error bars").
//
// The global estimate is the mode of the per-point estimates d(x_t) of the gap rule. Its error bar
// accounts for the two things the mode depends on: which points were drawn, and where the gap rule
// draws its lines. Each of R resamples draws T points with replacement (bootstrap) and a gap rule from
// the neighbourhood of the chosen one, first_gap_exponent + {-0.1, 0, +0.1} x noise_floor
// x {1/3, 1, 3}, and takes the mode of that rule's estimates on those points. Over the R modes:
//   low, high: the 5th and 95th percentiles (a 90 % interval);
//   error:     their standard deviation;
//   mean_error: the standard deviation of the mean per-point estimate (bootstrap only, the rule fixed).
// (DimensionInterval, the result, is declared beside DimensionSummary, which carries it.)
// The resamples use counter-based random numbers under a fixed seed: the same eigenvalues give the same
// interval on every backend and thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "qgml/geometry/dimension_estimate.hpp"

namespace qgml {

constexpr int default_dimension_resamples = 200;

// eigenvalues: count x D, row-major, each row descending; valid[t] = false for a failed eigensolve
// (such points are left out, as in the histogram). checked: empty, or per point the estimate after the
// spread check (geometry/tangent_spread.hpp); each rule's estimate then moves by the check's change of
// the chosen rule's estimate at that point (clamped to 0 .. D).
DimensionInterval dimension_interval(const std::vector<double>& eigenvalues, const std::vector<bool>& valid,
                                     int ambient_dimension, const DimensionEstimatorSettings& settings,
                                     int resamples = default_dimension_resamples, std::uint64_t seed = 1,
                                     const std::vector<int>& checked = {});

}  // namespace qgml
