// Training checkpoints. A checkpoint directory holds one subdirectory per saved epoch,
// epoch-NNNNNN/ with matrices.npy (+ .json), adam_m.npy, adam_v.npy, history.csv and state.json, and a
// file LATEST naming the newest complete one. A checkpoint is written in full before LATEST is
// replaced (atomically), so an interrupted or failed write (a full disk) leaves the previous
// checkpoint in force; older checkpoints beyond the last two are removed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qgml/io/configuration_io.hpp"
#include "qgml/train/training_settings.hpp"

namespace qgml {

struct CheckpointState {
  HostMatrices matrices;
  Precision precision = Precision::double_precision;
  std::vector<double> adam_m, adam_v;  // D x N x N each, moment layout of HermitianAdam
  int adam_step = 0;
  int epoch = 0;  // completed epochs
  std::uint64_t seed = 0;
  long points = 0;  // T, checked on resume
  std::vector<EpochRecord> history;
};

// Writes dir/epoch-<epoch>/ and points dir/LATEST at it. Throws qgml::Error on failure, after
// removing the partial subdirectory.
void write_checkpoint(const std::string& dir, const CheckpointState& state);
// Reads the checkpoint LATEST names (dir may also be one epoch-NNNNNN subdirectory).
CheckpointState read_checkpoint(const std::string& dir);

}  // namespace qgml
