// The fuzzy-sphere training run several tests share (the settings of docs/math.md A.1): T = 2500 points on the unit
// sphere, N = 3, w = 0.25, lr 0.01, batch 500, QR initialisation.
#pragma once

#include "qgml/data/datasets.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/train/trainer.hpp"

namespace qgml::test {

inline TrainingSettings sphere_settings(int epochs) {
  TrainingSettings s;
  s.epochs = epochs;
  s.batch_size = 500;
  s.learning_rate = 0.01;
  s.loss.w = 0.25;
  s.seed = 7;
  // No plateau stop and checkpoints at the end only: the cases that test those set them.
  s.early_stop_tolerance = 0;
  s.checkpoint_every = 0;
  return s;
}

template <class Real, class Space>
struct SphereRun {
  RealMatrix<Real, typename Space::memory_space> data;
  MatrixConfiguration<Real, Space> config;
  std::vector<EpochRecord> history;
};

// Trains the spin-1 fuzzy sphere from the QR initialisation for `epochs` epochs.
template <class Real, class Space>
SphereRun<Real, Space> train_sphere_run(const Space& exec, int epochs) {
  SphereRun<Real, Space> r{sphere_points<Real>(exec, 2500, 3, 0.0, 42), qr_configuration<Real>(3, 3, 1, exec), {}};
  Trainer<Real, Space> trainer(r.config, r.data, sphere_settings(epochs), exec);
  r.history = trainer.train();
  return r;
}

}  // namespace qgml::test
