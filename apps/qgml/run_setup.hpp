// What a training run is built from, shared by qgml train and qgml tune: the training settings and
// the initial matrix configuration, both from the resolved configuration (the data come from
// data_source.hpp).
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>

#include "qgml/common/error.hpp"
#include "qgml/io/configuration_io.hpp"
#include "qgml/model/default_matrix_size.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/model/matrix_configuration.hpp"
#include "qgml/train/training_settings.hpp"

#include "config.hpp"

namespace qgml::app {

// The training.* settings; checkpoints go to run_dir/checkpoints.
inline TrainingSettings training_settings(const Config& c, const std::string& run_dir) {
  TrainingSettings s;
  s.epochs = int(c.integer("training.epochs"));
  s.batch_size = int(c.integer("training.batch_size"));
  s.learning_rate = c.real("training.lr");
  s.schedule.kind = parse_schedule_kind(c.text("training.schedule"));
  s.schedule.gamma = c.real("training.gamma");
  s.schedule.step_size = int(c.integer("training.step_size"));
  s.schedule.min_lr = c.real("training.min_lr");
  s.loss.w = c.real("training.w");
  s.loss.penalty = parse_penalty_kind(c.text("training.penalty"));
  s.loss.penalty_weight = c.real("training.penalty_weight");
  s.loss.degeneracy = parse_degeneracy_policy(c.text("training.degeneracy"));
  s.seed = std::uint64_t(c.integer("training.seed"));
  s.checkpoint_every = int(c.integer("training.checkpoint_every"));
  s.checkpoint_dir = (std::filesystem::path(run_dir) / "checkpoints").string();
  s.early_stop_tolerance = c.real("training.early_stop");
  s.early_stop_window = int(c.integer("training.early_stop_window"));
  s.check_replicas = c.boolean("training.check_replicas");
  s.warm_start_eigh = c.boolean("training.warm_start");
  s.kernel = parse_loss_kernel(c.text("training.kernel"));
  if (s.warm_start_eigh && (s.kernel == LossKernel::team || s.kernel == LossKernel::fused_host))
    throw Error("training.kernel = " + to_string(s.kernel) +
                " solves cold: it does not take training.warm_start = true (warm starts run the separate kernels; "
                "set training.kernel to auto or separate)");
  if (!is_host_space_v<Kokkos::DefaultExecutionSpace> && s.kernel == LossKernel::fused_host)
    throw Error(std::string("training.kernel = fused-host runs on CPU builds only; this build runs on ") +
                Kokkos::DefaultExecutionSpace::name() + " (set training.kernel to auto or team)");
  return s;
}

// The model's shape. With model.load, D and N are those of the loaded matrices: D must be the data's
// and a model.N set in the config or on the command line must agree with the file's N; model.N of
// the configuration is then set to the file's N (origin "taken from model.load FILE"), so that the
// log and the run's config.yaml show the N that is trained.
struct ModelShape {
  int n = 0;
  std::string load;     // model.load, empty: model.init
  HostMatrices loaded;  // the matrices of model.load
};

inline ModelShape resolve_model_shape(Config& c, int d) {
  ModelShape m;
  m.load = c.text("model.load");
  const bool automatic = c.is_auto("model.N");
  if (m.load.empty()) {
    if (automatic) {
      m.n = default_matrix_size(d);
      c.set("model.N", std::to_string(m.n), "automatic: " + default_matrix_size_rule(d));
    } else {
      m.n = int(c.integer("model.N"));
    }
    return m;
  }
  m.loaded = load_matrices(m.load);
  if (m.loaded.D != d)
    throw Error("model.load: the configuration '" + m.load + "' has D = " + std::to_string(m.loaded.D) +
                " matrices but the data have D = " + std::to_string(d) + " coordinates");
  const std::string origin = c.origin("model.N");
  if (!automatic && origin != "default" && c.integer("model.N") != m.loaded.N)
    throw Error("model.N = " + c.text("model.N") + " (" + origin + ") disagrees with model.load: '" + m.load +
                "' has N = " + std::to_string(m.loaded.N) + " (leave model.N out to take N from the file)");
  m.n = m.loaded.N;
  c.set("model.N", std::to_string(m.n), "taken from model.load " + m.load);
  return m;
}

// The model.* initial configuration (model.load, else model.init) for data with D = d coordinates.
template <class Real>
MatrixConfiguration<Real, Kokkos::DefaultExecutionSpace> initial_configuration(
    const Kokkos::DefaultExecutionSpace& exec, const Config& c, const ModelShape& shape, int d) {
  if (!shape.load.empty()) return to_configuration<Real>(shape.loaded, exec);
  const int n = shape.n;
  const std::string init = c.text("model.init");
  const auto seed = std::uint64_t(c.integer("model.seed"));
  if (init == "qr") return qr_configuration<Real>(d, n, seed, exec);
  if (init == "gaussian") return gaussian_hermitian_configuration<Real>(d, n, c.real("model.init_scale"), seed, exec);
  if (d != 3) throw Error("model.init = fuzzy_sphere needs D = 3 data, the data have D = " + std::to_string(d));
  return fuzzy_sphere_configuration<Real>(n, 2.0 / std::max(1, n - 1), exec);
}

}  // namespace qgml::app
