// The typed settings of a run (driver/settings/run_settings.hpp): read_run_settings gives each setting's
// value, an `auto` setting stays empty until the run chooses it, the run's choices are recorded in its
// RunSettings with their reasons and laid over the configuration by resolved_config, and the Config
// itself never changes.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/model/default_matrix_size.hpp"

#include "run/run_directory.hpp"
#include "settings/config.hpp"
#include "settings/run_settings.hpp"
#include "settings/run_setup.hpp"

using namespace qgml;
using namespace qgml::app;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

TEST_CASE("run settings: an auto setting is empty until the run chooses it", "[app][settings][run-settings]") {
  const RunSettings automatic = read_run_settings(load_config("", {}));
  CHECK_FALSE(automatic.model.n.has_value());
  CHECK_FALSE(automatic.model.outputs.has_value());
  CHECK_FALSE(automatic.training.patience.has_value());
  CHECK_FALSE(automatic.data.standardize.has_value());
  CHECK(automatic.analysis.geometry.spread.neighbours == 0);
  CHECK(automatic.choices.empty());

  const RunSettings given = read_run_settings(load_config("", {{"model.N", "8"},
                                                               {"model.outputs", "3"},
                                                               {"training.patience", "5"},
                                                               {"data.standardize", "false"},
                                                               {"analysis.spread_neighbours", "30"}}));
  CHECK(given.model.n == 8);
  CHECK(given.model.outputs == 3);
  CHECK(given.training.patience == 5);
  CHECK(given.data.standardize == false);
  CHECK(given.analysis.geometry.spread.neighbours == 30);
}

TEST_CASE("run settings: each section holds the values of the configuration", "[app][settings][run-settings]") {
  const Config c = load_config("", {{"task", "regression"},
                                    {"data.generator", "hypercube"},
                                    {"data.points", "123"},
                                    {"data.dimension", "7"},
                                    {"data.target_columns", "-2,-1"},
                                    {"model.precision", "float"},
                                    {"model.init", "gaussian"},
                                    {"training.epochs", "12"},
                                    {"training.lr", "0.25"},
                                    {"training.loss", "huber"},
                                    {"analysis.enabled", "false"},
                                    {"analysis.chunk", "77"},
                                    {"analysis.spread_scales", "10,20"},
                                    {"output.name", "r1"},
                                    {"output.plots", "false"},
                                    {"profiling.active", "9"}});
  const RunSettings s = read_run_settings(c);
  CHECK(s.task == Task::regression);
  CHECK(s.data.generator == "hypercube");
  CHECK(s.data.points == 123);
  CHECK(s.data.dimension == 7);
  CHECK(s.data.target_columns == "-2,-1");
  CHECK(s.model.single_precision);
  CHECK(s.model.init == "gaussian");
  CHECK(s.training.settings.epochs == 12);
  CHECK(s.training.settings.learning_rate == 0.25);
  CHECK(s.training.settings.task == Task::regression);
  CHECK(s.training.loss == "huber");
  CHECK_FALSE(s.analysis.enabled);
  CHECK(s.analysis.chunk == 77);
  CHECK(s.analysis.geometry.spread.scales == std::vector<int>{10, 20});
  CHECK(s.output.name == "r1");
  CHECK_FALSE(s.output.plots);
  CHECK(s.profiling.active == 9);
  // The trainer's settings complete the section: the loss as given, the checkpoints in the run.
  const TrainingSettings t = training_settings(s, "run");
  CHECK(t.supervised.loss == SupervisedLoss::huber);
  CHECK(t.checkpoint_dir == "run/checkpoints");
  CHECK_THROWS_WITH(read_run_settings(load_config("", {{"analysis.spread_scales", "20,10"}})),
                    ContainsSubstring("analysis.spread_scales"));
}

TEST_CASE("run settings: a run's choices are recorded, the configuration is not changed",
          "[app][settings][run-settings]") {
  const Config c = load_config("", {{"data.dimension", "5"}});
  RunSettings s = read_run_settings(c);
  const ModelShape shape = resolve_model_shape(s, 5);
  const int n = default_matrix_size(5);
  CHECK(shape.n == n);
  CHECK(s.model.n == n);
  CHECK_THAT(s.model.n_origin, StartsWith("automatic: "));
  REQUIRE(s.choices.size() == 1);
  CHECK(s.choices[0].key == "model.N");
  // A second resolution keeps the chosen N.
  CHECK(resolve_model_shape(s, 5).n == n);
  s.choose("data.standardize", "true", "automatic: a test's reason");

  CHECK(c.is_auto("model.N"));
  CHECK(c.is_auto("data.standardize"));
  CHECK(c.origin("model.N") == "default");
  const Config resolved = resolved_config(c, s);
  CHECK(resolved.text("model.N") == std::to_string(n));
  CHECK(resolved.origin("model.N") == s.model.n_origin);
  CHECK(resolved.text("data.standardize") == "true");
  CHECK(resolved.origin("data.standardize") == "automatic: a test's reason");
  CHECK(resolved.text("data.dimension") == "5");
  CHECK_THAT(config_yaml(resolved), ContainsSubstring("  N: " + std::to_string(n) + "  # automatic: "));
  // The recorded configuration reads back as the run resolved it: nothing is auto any more.
  const RunSettings again = read_run_settings(resolved);
  CHECK(again.model.n == n);
  CHECK(again.data.standardize == true);
  // A later choice of a key replaces the earlier one: one record per key, the last value.
  s.choose("model.N", "7", "a later reason");
  int records = 0;
  for (const SettingChoice& choice : s.choices) records += choice.key == "model.N" ? 1 : 0;
  CHECK(records == 1);
  CHECK(s.choices.size() == 2);
  CHECK(resolved_config(c, s).text("model.N") == "7");
  CHECK(resolved_config(c, s).origin("model.N") == "a later reason");
}

TEST_CASE("run settings: a given model.N is kept and nothing is recorded", "[app][settings][run-settings]") {
  RunSettings s = read_run_settings(load_config("", {{"model.N", "6"}}));
  CHECK(resolve_model_shape(s, 5).n == 6);
  CHECK(s.choices.empty());
  CHECK(s.model.n_origin == "command line --model.N");
}
