// Settings and per-epoch records of training (docs/math.md 8.1, 8.2); the trainer itself is in trainer.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qgml/linalg/team_shape.hpp"
#include "qgml/train/adam.hpp"
#include "qgml/train/loss_kernel.hpp"
#include "qgml/train/loss_settings.hpp"
#include "qgml/train/supervised_loss.hpp"
#include "qgml/train/supervised_metrics.hpp"
#include "qgml/train/task.hpp"

namespace qgml {

// Learning rate as a function of the epoch e = 0, 1, ...:
//   constant: lr;  exponential: lr gamma^e;  step: lr gamma^floor(e / step_size);
//   cosine: min_lr + (lr - min_lr) (1 + cos(pi e / epochs)) / 2.
struct LearningRateSchedule {
  enum class Kind { constant, exponential, step, cosine };
  Kind kind = Kind::constant;
  double gamma = 1.0;
  int step_size = 1;
  double min_lr = 0.0;

  double at(double lr, int epoch, int epochs) const;
};

LearningRateSchedule::Kind parse_schedule_kind(const std::string& s);
std::string to_string(LearningRateSchedule::Kind k);

// The defaults are those of the program's training.* settings (one default per setting: the settings
// table, driver/settings/settings_table.cpp, and tests/app/test_setting_defaults.cpp compares them).
struct TrainingSettings {
  int epochs = 2000;
  int batch_size = 500;  // 0 or >= T: full batch
  double learning_rate = 0.01;
  LearningRateSchedule schedule;
  LossSettings loss;
  AdamSettings adam;
  std::uint64_t seed = 7;      // shuffling: epoch e uses the permutation keyed by (seed, e)
  int checkpoint_every = 10;   // epochs between checkpoints (0: only at the end, if a directory is set)
  std::string checkpoint_dir;  // empty: no checkpoints
  // Plateau test after epoch e (early_stop_converged): with W = early_stop_window and m_j the mean epoch
  // loss over epochs j - W + 1 .. j, stop when |m_e - m_{e-W}| <= tol |m_{e-W}| (tol 0: never). W = 1
  // compares consecutive epochs.
  double early_stop_tolerance = 1e-3;
  int early_stop_window = 25;
  // Supervised training with validation points (Trainer::set_validation): stop when the mean validation
  // loss has not improved on its best for this many epochs; Trainer::restore_best() then returns the
  // operators of the best epoch (tracked whatever this is). 0: off.
  int validation_patience = 0;
  bool check_replicas = false;  // data-parallel debugging: compare the matrices of all ranks every epoch
  // Warm-started eigensolves: each point's eigenvectors from the previous epoch are the starting basis
  // of a Jacobi refinement (EighOptions::warm_start); holds T N^2 complex numbers. On CPUs the cold
  // packed solver is faster (perf/NOTES.md, "Warm-started eigensolves during training (performance
  // issue)"); this is for measurement and for GPU work.
  bool warm_start_eigh = false;
  // The loss-gradient implementation (LossKernel, train/loss_kernel.hpp): auto is the fused host kernel
  // on CPUs where it applies and the team kernel on GPUs; warm starts need (and get) separate.
  LossKernel kernel = LossKernel::automatic;
  // How the team kernel lays points on teams (linalg/team_shape.hpp; automatic: one thread per point on
  // CPUs, several points per team on GPUs).
  TeamShape team_shape = {};
  // With it, psi_0 and phi by tridiagonal solves instead of the whole spectrum where that pays
  // (LossGradient::SpectralPath::automatic; false: full_spectrum).
  bool ground_state_path = true;
  // In double, from N = LossGradient::mixed_precision_min_n on the fused ground-state path: the
  // Householder reduction in single precision, psi_0, E_0 and phi refined in double to double accuracy
  // (ground_state/ground_state_mixed.hpp); false: the reduction in double.
  bool mixed_precision_reduction = true;
  // In double, where the mixed precision does not run, on builds for 512-bit vectors: the fused path's
  // packs of 16 points, two vectors per lane operation (LossGradient::PackWidth::automatic); false: 8.
  bool wide_packs = true;
  // Supervised training (docs/supervised.md): the configuration holds D + 1 operators (A_1..A_D, then
  // the target operator B) and each point D + 1 values (x, then its target y); supervised.loss must fit
  // the task (check_task_loss).
  Task task = Task::unsupervised;
  SupervisedSettings supervised;
};

// The batch size training uses on T points: settings.batch_size, or T when it is 0 or larger than T
// (full batch). The one place where training.batch_size is interpreted.
std::int64_t effective_batch_size(const TrainingSettings& settings, std::int64_t total_points);

// What one epoch did. Loss values are means over the epoch's batches (each batch a mean over its
// points), as in the reference; skipped batches are left out of them.
struct EpochRecord {
  int epoch = 0;  // 1-based
  double total = 0, reconstruction = 0, fluctuation = 0, penalty = 0;
  double learning_rate = 0;
  long degenerate_points = 0;  // points with a (nearly) degenerate ground state, summed over batches
  int skipped_batches = 0;     // batches whose loss or gradient was not finite
  int eigh_failures = 0;       // points whose eigensolve failed
  int batches = 0;
  double seconds = 0, points_per_second = 0;
  double eigh_sweeps = 0;  // mean Jacobi sweeps per point with warm_start_eigh (0: cold solves); not in the CSV
  // Supervised training only (has_targets): the mean supervised loss over the batches (total then adds
  // lambda times the unsupervised loss), the metrics of the predictions made during the epoch (each with
  // the operators before its batch's step) and of the validation points with the operators at the end
  // of the epoch (NaN without validation points).
  bool has_targets = false;
  double supervised = 0;
  SupervisedMetrics train, validation;
};

// Whether the plateau test of TrainingSettings holds after the last epoch of `history` (at least 2 W
// epochs; a non-finite mean never converges).
bool early_stop_converged(const TrainingSettings& settings, const std::vector<EpochRecord>& history);

// Writes the history as CSV (one row per epoch) or JSON (an array of objects), atomically. The losses of an
// epoch whose batches were all skipped are NaN: "nan" in the CSV, null in the JSON. A supervised history
// (has_targets) has the columns supervised, train_mae, train_rmse, train_r2, train_accuracy, train_auc and
// the same five for validation after those of an unsupervised one.
void write_history_csv(const std::string& path, const std::vector<EpochRecord>& history);
void write_history_json(const std::string& path, const std::vector<EpochRecord>& history);
// Reads a CSV written by write_history_csv; throws qgml::Error naming the file and line otherwise.
std::vector<EpochRecord> read_history_csv(const std::string& path);

}  // namespace qgml
