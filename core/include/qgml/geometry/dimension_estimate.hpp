// Intrinsic dimension from the spectrum of the quantum metric (spec 3.5, "Algorithm 1").
//
// Per point, with the metric eigenvalues sorted descending e_0 >= e_1 >= ... >= e_{D-1}:
//   rho_i = e_i / max(e_{i+1}, floor),  i = 0 .. D-2,  floor = relative_floor * e_0,
//   d = 1 + argmax_i rho_i            if max_i rho_i >= min_gap_ratio,
//   d = D                             otherwise ("no gap": every direction is tangent),
//   d = 0                             if e_0 <= 0 (the metric vanishes: no tangent direction).
// The floor keeps eigenvalues that are zero up to rounding (of either sign) from producing negative
// or infinite ratios; this is the descending form of the rule and is correct for every D >= 2 (the
// reference's mixed orderings and its inability to return D are spec 3.5 and 7, items 7 and 8).
#pragma once

#include <Kokkos_Core.hpp>

#include <string>
#include <vector>

#include "qgml/common/types.hpp"
#include "qgml/io/json_fields.hpp"

namespace qgml {

struct DimensionEstimatorSettings {
  double min_gap_ratio = 2.0;  // a gap is a ratio e_i / e_{i+1} at least this large
  double relative_floor = -1;  // < 0: 100 epsilon of the precision
};

template <class Real>
KOKKOS_INLINE_FUNCTION int estimate_dimension_from_descending(const Real* e, int d, Real min_gap_ratio,
                                                              Real relative_floor) {
  if (!(e[0] > Real(0))) return 0;
  const Real floor = relative_floor * e[0];
  Real best = Real(-1);
  int gamma = 0;
  for (int i = 0; i + 1 < d; ++i) {
    const Real denominator = e[i + 1] > floor ? e[i + 1] : floor;
    const Real rho = e[i] / denominator;
    if (rho > best) {
      best = rho;
      gamma = i;
    }
  }
  return (d >= 2 && best >= min_gap_ratio) ? gamma + 1 : d;
}

// Statistics of per-point estimates: histogram over d = 0 .. D and the derived summary.
struct DimensionSummary {
  int ambient_dimension = 0;
  long points = 0;
  std::vector<long> histogram;  // histogram[d] = number of points with estimate d
  int mode = 0;
  double median = 0, mean = 0;
  std::vector<double> fraction() const;
};

DimensionSummary summarize_dimensions(const std::vector<long>& histogram);

// JSON object with D, points, mode, median, mean, histogram and fraction per dimension, then the extra
// fields (whose keys must differ from those); atomic write.
void write_dimension_summary_json(const std::string& path, const DimensionSummary& s, const JsonFields& extra = {});

}  // namespace qgml
