// The settings of a run as typed values (RunSettings), read from the configuration (config.hpp) by
// read_run_settings, the one function that looks settings up by their keys. The choices a run makes
// later from its data (model.N, data.standardize, model.outputs, ...) are made on a run's own
// RunSettings and recorded with their reasons (choose), so that resolved_config gives the configuration
// the run actually trained (its config.yaml and checkpoint fingerprint); a Config is never changed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "qgml/geometry/quantum_geometry.hpp"
#include "qgml/train/task.hpp"
#include "qgml/train/training_settings.hpp"

#include "run/profiler.hpp"
#include "settings/config.hpp"

namespace qgml::app {

// data.*: where the points come from (data.array, else data.file, else data.generator) and what is
// done to them.
struct DataSection {
  std::string generator, file, array, placement;
  std::int64_t points = 0;  // data.points, for a generator
  int dimension = 0, intrinsic_dimension = 0;
  double noise = 0, radius = 0;
  std::uint64_t seed = 0;
  std::optional<bool> standardize;  // empty: auto
  // Supervised tasks: the targets and the validation points.
  long target_column = -1;
  std::string target_columns, target_file, validation_file;
  double validation_fraction = 0;
};

// model.*: the matrices' shape and initialisation.
struct ModelSection {
  std::optional<int> n;        // model.N; empty: auto
  std::string n_origin;        // where model.N came from ("default", a file line, "automatic: ...")
  std::optional<int> outputs;  // model.outputs; empty: auto
  std::string init, load;
  bool single_precision = false;  // model.precision float
  double init_scale = 0;
  std::uint64_t seed = 0;
};

// training.*: the trainer's settings, except what depends on the data (the supervised loss and outputs,
// the patience, the checkpoint directory), which training_settings (run_setup.hpp) completes.
struct TrainingSection {
  TrainingSettings settings;
  std::string loss;             // training.loss: "auto" or a loss
  std::optional<int> patience;  // empty: auto
};

// analysis.*: the dimension analysis after training. geometry.spread.neighbours is 0 for auto.
struct AnalysisSection {
  bool enabled = true;
  GeometrySettings geometry;
  int chunk = 0;
};

struct OutputSection {
  std::string directory, name;
  bool plots = true;
};

// An automatic choice (or a value the run resolved, such as a path made absolute): key = value, and
// where it came from, as config.yaml records it.
struct SettingChoice {
  std::string key, value, origin;
};

struct RunSettings {
  Task task = Task::unsupervised;
  DataSection data;
  ModelSection model;
  TrainingSection training;
  AnalysisSection analysis;
  OutputSection output;
  ProfilerOptions profiling;
  bool gpu_aware_mpi = false;
  std::vector<SettingChoice> choices;  // one per key, in the order the keys were first chosen

  // Records key = value from origin; a later choice of the same key replaces the earlier one.
  void choose(const std::string& key, const std::string& value, const std::string& origin) {
    for (SettingChoice& c : choices)
      if (c.key == key) {
        c = {key, value, origin};
        return;
      }
    choices.push_back({key, value, origin});
  }
};

// Every setting of c as its typed value. Throws qgml::Error naming the setting for a value no check at
// load time can refuse (analysis.spread_scales).
RunSettings read_run_settings(const Config& c);

// The data.* settings alone (the commands that read or generate the points and train nothing).
DataSection read_data_settings(const Config& c);

// c with the choices of s applied in their order: the configuration the run trained.
Config resolved_config(const Config& c, const RunSettings& s);

}  // namespace qgml::app
