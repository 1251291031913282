// What a training run is built from, shared by qgml train and qgml tune: the training settings and
// the initial matrix configuration, both from the run's settings (run_settings.hpp; the data come from
// data_source.hpp).
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "qgml/common/error.hpp"
#include "qgml/io/configuration_io.hpp"
#include "qgml/io/npy.hpp"
#include "qgml/model/default_matrix_size.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/model/matrix_configuration.hpp"
#include "qgml/train/training_settings.hpp"

#include "data/data_source.hpp"
#include "settings/run_settings.hpp"

namespace qgml::app {

// The trainer's settings of the run s: the training.* settings completed by what the data settled
// (model.outputs, training.loss, training.patience); checkpoints go to run_dir/checkpoints. Throws for
// combinations of settings that cannot run.
inline TrainingSettings training_settings(const RunSettings& rs, const std::string& run_dir) {
  TrainingSettings s = rs.training.settings;
  s.checkpoint_dir = (std::filesystem::path(run_dir) / "checkpoints").string();
  s.validation_patience = rs.training.patience.value_or(0);
  if (s.warm_start_eigh && (s.kernel == LossKernel::team || s.kernel == LossKernel::fused_host))
    throw Error("training.kernel = " + to_string(s.kernel) +
                " solves cold: it does not take training.warm_start = true (warm starts run the separate kernels; "
                "set training.kernel to auto or separate)");
  if (is_supervised(s.task)) {
    const std::string& loss = rs.training.loss;
    s.supervised.outputs = rs.model.outputs.value_or(1);
    s.supervised.loss = loss != "auto"                                               ? parse_supervised_loss(loss)
                        : s.task == Task::classification && s.supervised.outputs > 1 ? SupervisedLoss::softmax
                                                                                     : default_supervised_loss(s.task);
    try {
      check_task_loss(s.task, s.supervised.loss);
    } catch (const Error& e) {
      throw Error(std::string("training.loss = ") + loss + ": " + e.what());
    }
  }
  if (!is_host_space_v<Kokkos::DefaultExecutionSpace> && s.kernel == LossKernel::fused_host)
    throw Error(std::string("training.kernel = fused-host runs on CPU builds only; this build runs on ") +
                Kokkos::DefaultExecutionSpace::name() + " (set training.kernel to auto or team)");
  return s;
}

// The model's shape. With model.load, D and N are those of the loaded matrices: D must be the data's
// and a model.N set in the config or on the command line must agree with the file's N; model.N of s
// is then the file's N (origin "taken from model.load FILE"), as is an automatic N its rule's, both
// recorded in s, so that the log and the run's config.yaml show the N that is trained.
struct ModelShape {
  int n = 0;
  std::string load;     // model.load, empty: model.init
  HostMatrices loaded;  // the matrices of model.load
};

inline ModelShape resolve_model_shape(RunSettings& s, int d) {
  ModelShape m;
  ModelSection& model = s.model;
  m.load = model.load;
  if (m.load.empty()) {
    if (!model.n) {
      model.n = default_matrix_size(d);
      model.n_origin = "automatic: " + default_matrix_size_rule(d);
      s.choose("model.N", std::to_string(*model.n), model.n_origin);
    }
    m.n = *model.n;
    return m;
  }
  m.loaded = load_matrices(m.load);
  if (m.loaded.D != d)
    throw Error("model.load: the configuration '" + m.load + "' has D = " + std::to_string(m.loaded.D) +
                " matrices but the data have D = " + std::to_string(d) + " coordinates");
  if (model.n && model.n_origin != "default" && *model.n != m.loaded.N)
    throw Error("model.N = " + std::to_string(*model.n) + " (" + model.n_origin + ") disagrees with model.load: '" +
                m.load + "' has N = " + std::to_string(m.loaded.N) + " (leave model.N out to take N from the file)");
  m.n = m.loaded.N;
  model.n = m.n;
  model.n_origin = "taken from model.load " + m.load;
  s.choose("model.N", std::to_string(m.n), model.n_origin);
  return m;
}

// The model.* initial configuration (model.load, else model.init) for data with D = d coordinates.
template <class Real>
MatrixConfiguration<Real, Kokkos::DefaultExecutionSpace> initial_configuration(
    const Kokkos::DefaultExecutionSpace& exec, const ModelSection& model, const ModelShape& shape, int d) {
  if (!shape.load.empty()) return to_configuration<Real>(shape.loaded, exec);
  const int n = shape.n;
  if (model.init == "qr") return qr_configuration<Real>(d, n, model.seed, exec);
  if (model.init == "gaussian") return gaussian_hermitian_configuration<Real>(d, n, model.init_scale, model.seed, exec);
  if (d != 3) throw Error("model.init = fuzzy_sphere needs D = 3 data, the data have D = " + std::to_string(d));
  return fuzzy_sphere_configuration<Real>(n, 2.0 / std::max(1, n - 1), exec);
}

// The number of points T and of coordinates D that the data.* settings describe, known before any point
// is read or generated (the memory check runs before the data are allocated): generated data from
// data.points and the generator's ambient dimension; an NPY file from its header; a CSV file from its
// first line (D) and its line count (T, a header line included: an upper bound). Empty when the file
// cannot be inspected: its reader then gives the precise error.
struct PlannedData {
  std::int64_t points = 0;
  int d = 0;
};

inline std::optional<PlannedData> planned_data(const DataSection& data, const PointsInMemory* memory = nullptr) {
  if (!data.array.empty() || memory) {
    if (!memory) return std::nullopt;  // the data loader's error
    return PlannedData{memory->rows, memory->columns};
  }
  const std::string& file = data.file;
  if (file.empty()) {
    const std::string& g = data.generator;
    const int d = g == "sphere" || g == "hypercube" ? data.dimension
                  : g == "circle"                   ? 2
                  : g == "sphere10"                 ? 11
                  : g == "affine"                   ? 5
                  : g == "curve13"                  ? 13
                                                    : 3;  // spiral, line, swiss_roll, helix, mobius
    return PlannedData{data.points, d};
  }
  std::string ext = std::filesystem::path(file).extension().string();
  for (char& ch : ext) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  // Only a regular file is opened here (a FIFO would block the open); the reader names anything else.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  try {
    if (ext == ".npy") {
      // Reads the header and no row.
      const NpyArray a = read_npy_rows(file, [](std::size_t) { return std::pair<std::size_t, std::size_t>(0, 0); });
      if (a.shape.size() != 2) return std::nullopt;
      return PlannedData{std::int64_t(a.total_rows), int(a.shape[1])};
    }
    std::ifstream in(file, std::ios::binary);
    std::string line;
    if (!in || !std::getline(in, line)) return std::nullopt;
    PlannedData p;
    p.d = 1;
    for (char ch : line) p.d += ch == ',' ? 1 : 0;
    p.points = 1;
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0)
      for (std::streamsize i = 0; i < in.gcount(); ++i) p.points += buffer[i] == '\n' ? 1 : 0;
    return p;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace qgml::app
