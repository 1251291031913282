// The Hilbert-space dimension N that model.N = auto chooses for data in R^D (docs/dimension.md,
// "Choosing N"): N = 32 for D <= 3, else the smallest power of two N >= max(16, D + 2), at most 32.
// Measured on the benchmark manifolds (perf/dimension_benchmark.py, 2000 points, noise 0 to 0.1,
// w = 0.5): too small an N underfits and reads too high a dimension (a 10-sphere in R^11 reads 6 at
// N = 4, a curve in R^13 reads 6-7 at N = 4-8, the 8-turn helix in R^3 reads 2 at N = 8-16), while
// N = 32 reads every D <= 3 manifold right (circle, sphere, Swiss roll, Moebius band, helix) within the
// time budget of docs/dimension.md, "Choosing N". For 4 <= D <= 14, N = 16 reads the 3-, 4- and
// 10-dimensional manifolds in R^5 and R^11 and the curve in R^13 right; N = 32 there reads the curve as 2
// and the noisy affine 3-space as 2. The cap at 32 (perf/dimension_generalisation.py, tuning half, 2500
// points): above D = 30 a larger N read no data set better (a 6-manifold in R^36 read 35 at N = 64 and 11
// at N = 32) and cost more per epoch (O(T D N^2 + T N^3)), the more so at N = 128. The times are in
// perf/NOTES.md, "Measurements moved out of code comments (2026-12-03)".
// The metric has rank at most 2 (N - 1) = 62 at N = 32: a larger intrinsic dimension needs model.N.
#pragma once

#include <string>

namespace qgml {

constexpr int default_matrix_size_cap = 32;

inline int default_matrix_size(int ambient_dimension) {
  if (ambient_dimension <= 3) return 32;
  int n = 16;
  while (n < ambient_dimension + 2 && n < default_matrix_size_cap) n *= 2;
  return n;
}

// The rule in words, for logs: "N = 32 for D <= 3" or "the smallest power of two >= max(16, D + 2 = 7),
// at most 32", and where the cap applies, the largest dimension the metric can then show.
inline std::string default_matrix_size_rule(int ambient_dimension) {
  if (ambient_dimension <= 3) return "N = 32 for D <= 3";
  const std::string cap = std::to_string(default_matrix_size_cap);
  std::string rule =
      "the smallest power of two >= max(16, D + 2 = " + std::to_string(ambient_dimension + 2) + "), at most " + cap;
  if (ambient_dimension + 2 > default_matrix_size_cap)
    rule += "; the metric's rank is then at most 2 (N - 1) = " + std::to_string(2 * (default_matrix_size_cap - 1)) +
            ": set model.N for a larger intrinsic dimension";
  return rule;
}

}  // namespace qgml
