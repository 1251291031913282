// The outputs of a training run: history.csv, history.json and final_matrices.npy.
#pragma once

#include <string>
#include <vector>

#include "qgml/model/matrix_configuration.hpp"
#include "qgml/parallel/communicator.hpp"
#include "qgml/train/training_settings.hpp"

#include "train/train_spaces.hpp"

namespace qgml::app {

// A collective: history.csv, history.json and final_matrices.npy, written by rank 0.
template <class Real>
void write_outputs(const std::string& run_dir, const std::vector<EpochRecord>& history,
                   const MatrixConfiguration<Real, Exec>& config, const Exec& exec, Communicator& comm);

}  // namespace qgml::app
