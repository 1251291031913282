// Training checkpoints. A checkpoint directory holds one subdirectory per saved epoch,
// epoch-NNNNNN/ with matrices.npy (+ .json), adam_m.npy, adam_v.npy, history.csv and state.json, and a
// file LATEST naming the newest complete one. A checkpoint is written in full before LATEST is
// replaced (atomically), so an interrupted or failed write (a full disk) leaves the previous
// checkpoint in force; older checkpoints beyond the last two are removed. Each epoch directory ends
// with a file `checksums`, written last: the 64-bit FNV-1a hash of every other file in it, checked
// before any of them is read. With a warm-start basis (TrainingSettings::warm_start_eigh) the basis
// of every point is kept too (warm_start.npy, T x N x N in point order whatever the number of ranks
// that wrote it: the Trainer gathers the shards), so that a resumed run is bit-identical. Supervised
// training with validation points also keeps its best epoch's operators (best_matrices.npy) and loss.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/io/configuration_io.hpp"
#include "qgml/model/matrix_configuration.hpp"
#include "qgml/train/adam.hpp"
#include "qgml/train/training_settings.hpp"

namespace qgml {

// 64-bit FNV-1a (offset basis 14695981039346656037, prime 1099511628211) of `size` bytes, continuing
// from `hash`.
constexpr std::uint64_t fnv1a64_offset = 14695981039346656037ULL;
std::uint64_t fnv1a64(const void* bytes, std::size_t size, std::uint64_t hash = fnv1a64_offset);
// 16 lower-case hexadecimal digits.
std::string hex64(std::uint64_t value);

// What a checkpoint was trained on: a hash of the points as trained (after standardisation) and the
// settings that shape training (their source included: data.file as an absolute path, or the
// generator's settings), as (key, value) pairs. A resume compares it with its own (qgml train).
struct CheckpointFingerprint {
  std::string data;  // hex64 of the points' hash; empty: not recorded
  std::vector<std::pair<std::string, std::string>> settings;
};

struct CheckpointState {
  HostMatrices matrices;
  Precision precision = Precision::double_precision;
  std::vector<double> adam_m, adam_v;  // D x N x N each, moment layout of HermitianAdam
  int adam_step = 0;
  int epoch = 0;  // completed epochs
  std::uint64_t seed = 0;
  long points = 0;  // T, checked on resume
  std::vector<EpochRecord> history;
  // training.early_stop ended the run at `epoch` while it allowed at most `max_epochs`: a resume trains
  // no further unless it asks for more than max_epochs.
  bool stopped_early = false;
  int max_epochs = 0;
  CheckpointFingerprint fingerprint;
  // The warm-start basis of every point (T x N x N, the eigenvectors of the last epoch), empty when
  // the run has none (or before its first epoch).
  HostMatrices warm_basis;
  // Supervised training with a validation patience (TrainingSettings::validation_patience): the epoch
  // with the lowest mean validation loss so far (0: none yet), that loss and the operators after it
  // (best_matrices.npy).
  int best_epoch = 0;
  double best_validation = 0;
  HostMatrices best_matrices;
};

// Writes dir/epoch-<epoch>/ and points dir/LATEST at it. Throws qgml::FileError on failure, after
// removing the partial subdirectory.
void write_checkpoint(const std::string& dir, const CheckpointState& state);
// Reads the checkpoint LATEST names (dir may also be one epoch-NNNNNN subdirectory). Throws
// qgml::FileError naming the file before any file is used when LATEST names anything but an epoch-NNNNNN
// directory of `dir`, when a file's checksum differs from the one in `checksums` or when a file is
// missing or not listed there.
CheckpointState read_checkpoint(const std::string& dir);

// The text of `checksums` for the files of one epoch directory as they are now (write_checkpoint
// writes it last).
std::string checkpoint_checksums(const std::string& epoch_dir);

// Throws qgml::Error naming `dir` unless `state` was written for D x N x N matrices, T = points,
// `seed` and `precision` (a resume must continue the same run).
void check_checkpoint_matches(const CheckpointState& state, const std::string& dir, int D, int N, long points,
                              std::uint64_t seed, Precision precision);

// The matrices and the optimizer state on the host (the run's epoch, seed, T and history are the
// caller's to fill in).
template <class Real, class ExecSpace>
CheckpointState checkpoint_state(const MatrixConfiguration<Real, ExecSpace>& config,
                                 const HermitianAdam<Real, ExecSpace>& adam, const ExecSpace& exec) {
  CheckpointState s;
  s.matrices = to_host(config, exec);
  s.precision = precision_of<Real>;
  auto m = Kokkos::create_mirror(adam.first_moment());
  auto v = Kokkos::create_mirror(adam.second_moment());
  auto step = Kokkos::create_mirror(adam.step_count());
  Kokkos::deep_copy(exec, m, adam.first_moment());
  Kokkos::deep_copy(exec, v, adam.second_moment());
  Kokkos::deep_copy(exec, step, adam.step_count());
  qgml::fence(exec, "qgml::checkpoint_state");
  s.adam_m.assign(m.data(), m.data() + m.span());
  s.adam_v.assign(v.data(), v.data() + v.span());
  s.adam_step = step();
  return s;
}

// The matrices and the optimizer state of `state` (checked with check_checkpoint_matches) onto the
// device.
template <class Real, class ExecSpace>
void restore_checkpoint(const CheckpointState& state, MatrixConfiguration<Real, ExecSpace>& config,
                        HermitianAdam<Real, ExecSpace>& adam, const ExecSpace& exec) {
  auto a = Kokkos::create_mirror(config.matrices());
  auto m = Kokkos::create_mirror(adam.first_moment());
  auto v = Kokkos::create_mirror(adam.second_moment());
  auto step = Kokkos::create_mirror(adam.step_count());
  const int n = config.matrix_size();
  for (int k = 0; k < config.dimension(); ++k)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const auto z = state.matrices(k, i, j);
        a(k, i, j) = complex_t<Real>(Real(z.real()), Real(z.imag()));
        const std::size_t idx = (std::size_t(k) * n + i) * n + j;
        m(k, i, j) = Real(state.adam_m[idx]);
        v(k, i, j) = Real(state.adam_v[idx]);
      }
  step() = state.adam_step;
  Kokkos::deep_copy(exec, config.matrices(), a);
  Kokkos::deep_copy(exec, adam.first_moment(), m);
  Kokkos::deep_copy(exec, adam.second_moment(), v);
  Kokkos::deep_copy(exec, adam.step_count(), step);
  config.update_square_sum(exec);
  qgml::fence(exec, "qgml::restore_checkpoint");
}

}  // namespace qgml
