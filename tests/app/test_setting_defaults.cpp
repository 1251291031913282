// One default per setting: the library's settings structs, default-constructed, hold the defaults of the
// settings table (driver/settings/settings_table.cpp) that the program, the C API, the Fortran module and the
// Python package read, and of qgml sample's options (driver/sample/sample_options.cpp). Each comparison
// parses those defaults through the program's own conversion (read_run_settings, training_settings,
// sampler_settings), so a default changed on one side only fails here.
#include <catch2/catch_test_macros.hpp>

#include <map>
#include <string>
#include <vector>

#include "qgml/geometry/quantum_geometry.hpp"
#include "qgml/sample/sampler_settings.hpp"
#include "qgml/train/training_settings.hpp"

#include "analysis/analysis.hpp"
#include "sample/sample_options.hpp"
#include "settings/config.hpp"
#include "settings/run_settings.hpp"
#include "settings/run_setup.hpp"

using namespace qgml;
using namespace qgml::app;

TEST_CASE("defaults: TrainingSettings{} holds the training.* defaults of the settings table",
          "[app][settings][defaults]") {
  const TrainingSettings program = training_settings(read_run_settings(load_config("", {})), "run");
  const TrainingSettings library{};
  CHECK(library.epochs == program.epochs);
  CHECK(library.batch_size == program.batch_size);
  CHECK(library.learning_rate == program.learning_rate);
  CHECK(library.schedule.kind == program.schedule.kind);
  CHECK(library.schedule.gamma == program.schedule.gamma);
  CHECK(library.schedule.step_size == program.schedule.step_size);
  CHECK(library.schedule.min_lr == program.schedule.min_lr);
  CHECK(library.loss.w == program.loss.w);
  CHECK(LossSettings{}.w == program.loss.w);
  CHECK(library.loss.penalty == program.loss.penalty);
  CHECK(library.loss.penalty_weight == program.loss.penalty_weight);
  CHECK(library.loss.degeneracy == program.loss.degeneracy);
  CHECK(library.seed == program.seed);
  CHECK(library.checkpoint_every == program.checkpoint_every);
  CHECK(library.early_stop_tolerance == program.early_stop_tolerance);
  CHECK(library.early_stop_window == program.early_stop_window);
  CHECK(library.validation_patience == program.validation_patience);
  CHECK(library.check_replicas == program.check_replicas);
  CHECK(library.warm_start_eigh == program.warm_start_eigh);
  CHECK(library.mixed_precision_reduction == program.mixed_precision_reduction);
  CHECK(library.wide_packs == program.wide_packs);
  CHECK(library.kernel == program.kernel);
  CHECK(library.task == program.task);
  // Not settings of the table: where checkpoints go is the run directory's (run_setup.hpp).
  CHECK(library.checkpoint_dir.empty());
}

TEST_CASE("defaults: SupervisedSettings{} holds the supervised training.* defaults of the settings table",
          "[app][settings][defaults]") {
  const TrainingSettings program =
      training_settings(read_run_settings(load_config("", {{"task", "regression"}})), "run");
  const SupervisedSettings library{};
  CHECK(library.loss == program.supervised.loss);
  CHECK(library.huber_delta == program.supervised.huber_delta);
  CHECK(library.lambda == program.supervised.lambda);
  CHECK(library.outputs == program.supervised.outputs);
}

TEST_CASE("defaults: GeometrySettings{} holds the analysis.* defaults of the settings table",
          "[app][settings][defaults]") {
  const GeometrySettings program = read_run_settings(load_config("", {})).analysis.geometry;
  const GeometrySettings library{};
  CHECK(library.metric == program.metric);
  CHECK(library.estimator.min_gap_ratio == program.estimator.min_gap_ratio);
  CHECK(library.estimator.noise_floor == program.estimator.noise_floor);
  CHECK(library.estimator.first_gap_exponent == program.estimator.first_gap_exponent);
  CHECK(library.kernel == program.kernel);
  const TangentSpreadSettings& a = library.spread;
  const TangentSpreadSettings& b = program.spread;
  CHECK(a.enabled == b.enabled);
  CHECK(a.neighbours == b.neighbours);
  CHECK(a.promote == b.promote);
  CHECK(a.promote_max == b.promote_max);
  CHECK(a.gap_below == b.gap_below);
  CHECK(a.gap_promote == b.gap_promote);
  CHECK(a.demote == b.demote);
  CHECK(a.band == b.band);
  CHECK(a.scales == b.scales);
  CHECK(a.local == b.local);
  CHECK(a.local_gap == b.local_gap);
  CHECK(a.local_band == b.local_band);
  CHECK(a.local_agree == b.local_agree);
  CHECK(a.local_consistency == b.local_consistency);
  CHECK(a.no_gap_ratio == b.no_gap_ratio);
  CHECK(a.distance_neighbours == b.distance_neighbours);
  CHECK(a.distance_share == b.distance_share);
}

TEST_CASE("defaults: SamplerSettings{} holds the defaults of qgml sample's options", "[app][settings][defaults]") {
  const SamplerSettings program = sampler_settings(sample_defaults());
  const SamplerSettings library{};
  CHECK(library.kind == program.kind);
  CHECK(library.beta == program.beta);
  CHECK(library.step_size == program.step_size);
  CHECK(library.adapt == program.adapt);
  CHECK(library.target_acceptance == program.target_acceptance);
  CHECK(library.warmup == program.warmup);
  CHECK(library.leapfrog_steps == program.leapfrog_steps);
  CHECK(library.seed == program.seed);
  // A given step size is not adapted; a given target acceptance is taken as it is.
  std::map<std::string, std::string> given = sample_defaults();
  given["step-size"] = "0.05";
  given["target-acceptance"] = "0.6";
  const SamplerSettings set = sampler_settings(given);
  CHECK(set.step_size == 0.05);
  CHECK_FALSE(set.adapt);
  CHECK(set.target_acceptance == 0.6);
}

TEST_CASE("defaults: every setting's default is valid for its own type, range and choices",
          "[app][settings][defaults]") {
  for (const Setting& s : schema()) {
    INFO(s.key << " = '" << s.default_value << "'");
    CHECK(setting_problem(s.key, s.default_value).empty());
  }
}
