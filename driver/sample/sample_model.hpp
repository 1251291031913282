// What a sampling run draws from: the trained run's standardisation and the fingerprint of its model.
#pragma once

#include <string>
#include <vector>

#include "qgml/model/initializers.hpp"

namespace qgml::app {

// The run's standardisation (x_data = mean + scale x_model), identity when the run has none.
struct Affine {
  std::vector<double> mean;
  double scale = 1;
};

// The standardisation of the run in `run_dir` (its standardization.json) for D = d.
Affine run_standardization(const std::string& run_dir, int d);

// What the draws are drawn from: FNV-1a-64 (train/checkpoint.hpp) over D, N and the matrices' values
// (as loaded, in double), then the standardisation's mean and scale (their 8-byte doubles).
std::string model_fingerprint(const HostMatrices& m, const Affine& a);

}  // namespace qgml::app
