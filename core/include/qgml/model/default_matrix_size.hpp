// The Hilbert-space dimension N that model.N = auto chooses for data in R^D (docs/dimension.md,
// "Choosing N"): N = 32 for D <= 3, else the smallest power of two N >= max(16, D + 2).
// Measured on the benchmark manifolds (perf/dimension_benchmark.py, 2000 points, noise 0 to 0.1,
// w = 0.5): too small an N underfits and reads too high a dimension (a 10-sphere in R^11 reads 6 at
// N = 4, a curve in R^13 reads 6-7 at N = 4-8, the 8-turn helix in R^3 reads 2 at N = 8-16), while
// N = 32 reads every D <= 3 manifold right (circle, sphere, Swiss roll, Moebius band, helix) in 3-5 s
// per 2000 points on 2 cores. For larger D, N = 16 reads the 3-, 4- and 10-dimensional manifolds in
// R^5 and R^11 and the curve in R^13 right, and N = 32 would cost about 5x more time per epoch.
#pragma once

#include <string>

namespace qgml {

inline int default_matrix_size(int ambient_dimension) {
  if (ambient_dimension <= 3) return 32;
  int n = 16;
  while (n < ambient_dimension + 2) n *= 2;
  return n;
}

// The rule in words, for logs: "N = 32 for D <= 3" or "the smallest power of two >= max(16, D + 2 = 7)".
inline std::string default_matrix_size_rule(int ambient_dimension) {
  if (ambient_dimension <= 3) return "N = 32 for D <= 3";
  return "the smallest power of two >= max(16, D + 2 = " + std::to_string(ambient_dimension + 2) + ")";
}

}  // namespace qgml
