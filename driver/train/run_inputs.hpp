// What a training run trains (RunInputs): prepared by prepare_inputs (train_inputs.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qgml/common/types.hpp"
#include "qgml/data/standardize.hpp"
#include "qgml/model/matrix_configuration.hpp"

#include "data/supervised_transform.hpp"
#include "train/train_spaces.hpp"

namespace qgml::app {

// What the run trains: this rank's points, the initial configuration and where its N came from.
template <class Real, class DataSpace>
struct RunInputs {
  RealMatrix<Real, DataSpace> data;
  std::int64_t total_points = 0;
  int d = 0, n = 0;
  std::string n_source;  // " (from model.load FILE)" or ""
  MatrixConfiguration<Real, Exec> config;
  Standardization standardization;     // what data.standardize applied (empty mean: nothing)
  std::vector<std::string> automatic;  // the automatic choices, one line each, for the log
  // Supervised tasks: the data have D + 1 columns (the target last), the configuration D + 1 operators.
  bool supervised = false;
  SupervisedTransform transform;
  RealMatrix<Real, Exec::memory_space> validation;  // T_v x (D + 1), on every rank
  std::string supervised_source;
};

}  // namespace qgml::app
