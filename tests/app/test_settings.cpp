// The program's settings table (driver/settings): "auto" where a setting allows it, one strict parser per
// type, duplicate keys and second documents refused, suggestions for misspelt keys.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "qgml/common/error.hpp"
#include "qgml/model/default_matrix_size.hpp"

#include "settings/config.hpp"

using namespace qgml::app;
using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

TEST_CASE("settings: model.N and data.standardize default to auto; auto only where allowed", "[app][settings]") {
  Config c = load_config("", {});
  CHECK(c.is_auto("model.N"));
  CHECK(c.is_auto("data.standardize"));
  CHECK_FALSE(c.is_auto("training.w"));
  CHECK(c.real("training.w") > 0);  // w > 0 by default: with w = 0 noisy data read as D
  CHECK(c.real("training.early_stop") > 0);
  CHECK_THROWS_WITH(c.integer("model.N"), Catch::Matchers::ContainsSubstring("still 'auto'"));
  CHECK_THROWS_WITH(c.boolean("data.standardize"), Catch::Matchers::ContainsSubstring("still 'auto'"));
  CHECK_THROWS_WITH(load_config("", {{"training.lr", "auto"}}),
                    Catch::Matchers::ContainsSubstring("training.lr = 'auto': expected a number"));
  const Config set = load_config("", {{"model.N", "12"}, {"data.standardize", "false"}});
  CHECK(set.integer("model.N") == 12);
  CHECK_FALSE(set.is_auto("model.N"));
  CHECK_FALSE(set.boolean("data.standardize"));
  CHECK(load_config("", {{"model.N", "auto"}}).is_auto("model.N"));
  c.set("model.N", "32", "automatic: N = 32 for D <= 3");
  CHECK(c.integer("model.N") == 32);
  CHECK(c.origin("model.N") == "automatic: N = 32 for D <= 3");
  CHECK_THAT(c.to_yaml(), Catch::Matchers::ContainsSubstring("  N: 32  # automatic: N = 32 for D <= 3\n"));
}

TEST_CASE("settings: one strict parser per type validates and reads", "[app][settings]") {
  // "2e2" was validated as a number with an integral value and read by stol as 2 (2 points trained).
  for (const char* text : {"2e2", "0x3", "1.5", "3 ", " 3", "", "+", "1e3", "3L"}) {
    INFO(text);
    CHECK_THROWS_WITH(load_config("", {{"data.points", text}}),
                      ContainsSubstring("data.points = '" + std::string(text) + "': expected an integer"));
  }
  CHECK_THROWS_WITH(load_config("", {{"training.epochs", "0x3"}}),
                    ContainsSubstring("training.epochs = '0x3': expected an integer"));
  CHECK(load_config("", {{"data.points", "200"}}).integer("data.points") == 200);
  CHECK(load_config("", {{"data.points", "+200"}}).integer("data.points") == 200);
  CHECK(load_config("", {{"data.seed", "9007199254740993"}}).integer("data.seed") == 9007199254740993L);  // > 2^53
  CHECK_THROWS_WITH(load_config("", {{"data.seed", "99999999999999999999"}}), ContainsSubstring("expected an integer"));
  // Reals: no trailing text, no hexadecimal, and inf and nan for no setting (every range is finite).
  for (const char* text : {"inf", "nan", "-inf", "1e400", "0x1p-3", "0.5 ", "0.5x", "1,5"}) {
    INFO(text);
    CHECK_THROWS_WITH(load_config("", {{"training.w", text}}),
                      ContainsSubstring("training.w = '" + std::string(text) + "': expected a number"));
  }
  CHECK(load_config("", {{"training.w", ".25"}}).real("training.w") == 0.25);
  CHECK(load_config("", {{"training.lr", "1e-3"}}).real("training.lr") == 1e-3);
  // The program reads what it set itself with the same parser.
  Config c = load_config("", {});
  c.set("training.epochs", "2e2", "test");
  CHECK_THROWS_WITH(c.integer("training.epochs"), ContainsSubstring("is not an integer"));
  // The check the other commands' options go through.
  CHECK(setting_problem("training.w", "0.25").empty());
  CHECK_THAT(setting_problem("training.w", "-1"), ContainsSubstring("out of range"));
  CHECK_THAT(setting_problem("analysis.chunk", "1e3"), ContainsSubstring("expected an integer"));
}

namespace {

struct ConfigFile {
  std::string path;
  explicit ConfigFile(const std::string& text) {
    path = (fs::temp_directory_path() / ("qgml-settings-" + std::to_string(::getpid()) + ".yaml")).string();
    std::ofstream(path) << text;
  }
  ~ConfigFile() { fs::remove(path); }
};

}  // namespace

TEST_CASE("settings: a key twice in a file and a second YAML document are refused with file:line", "[app][settings]") {
  {
    ConfigFile f("training:\n  epochs: 3\n  lr: 0.1\n  epochs: 4\n");
    CHECK_THROWS_WITH(load_config(f.path, {}),
                      ContainsSubstring(f.path + ":4: duplicate setting 'training.epochs' (first on line 2)"));
  }
  {
    ConfigFile f("training:\n  epochs: 3\ndata:\n  points: 10\ntraining:\n  lr: 0.1\n");
    CHECK_THROWS_WITH(load_config(f.path, {}),
                      ContainsSubstring(f.path + ":5: duplicate section 'training' (first on line 1)"));
  }
  {
    ConfigFile f("# comment\n---\ntraining:\n  epochs: 3\n---\ntraining:\n  epochs: 4\n");
    CHECK_THROWS_WITH(load_config(f.path, {}), ContainsSubstring(f.path + ":5: a second YAML document"));
  }
  {
    ConfigFile f("---\ntraining:\n  epochs: 3\n...\n");  // one document, with its markers
    CHECK(load_config(f.path, {}).integer("training.epochs") == 3);
  }
  {
    ConfigFile f("data:\n  points: 2e2\n");
    CHECK_THROWS_WITH(load_config(f.path, {}),
                      ContainsSubstring(f.path + ":2: data.points = '2e2': expected an integer"));
  }
  const fs::path dir = fs::temp_directory_path() / ("qgml-settings-dir-" + std::to_string(::getpid()) + ".yaml");
  fs::create_directories(dir);
  CHECK_THROWS_WITH(load_config(dir.string(), {}),
                    ContainsSubstring(dir.string()) && ContainsSubstring("is a directory"));
  fs::remove(dir);
}

TEST_CASE("settings: a misspelt key gets the close setting, a far one no guess", "[app][settings]") {
  const auto message = [](const std::string& key) {
    try {
      load_config("", {{key, "1"}});
    } catch (const qgml::Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(message("training.learnin_rate"), ContainsSubstring("did you mean 'training.lr'?"));
  CHECK_THAT(message("learnin_rate"), ContainsSubstring("did you mean 'training.lr'?"));
  CHECK_THAT(message("training.learning_rate"), ContainsSubstring("did you mean 'training.lr'?"));
  CHECK_THAT(message("training.epochz"), ContainsSubstring("did you mean 'training.epochs'?"));
  CHECK_THAT(message("epochs"), ContainsSubstring("did you mean 'training.epochs'?"));
  CHECK_THAT(message("data.point"), ContainsSubstring("did you mean 'data.points'?"));
  CHECK_THAT(message("model.n"), ContainsSubstring("did you mean 'model.N'?"));
  CHECK_THAT(message("trainig.batch_size"), ContainsSubstring("did you mean 'training.batch_size'?"));
  CHECK_THAT(message("foo.bar"), ContainsSubstring("unknown setting 'foo.bar' (qgml --help lists the settings)"));
  CHECK_THAT(message("completely_unrelated"), !ContainsSubstring("did you mean"));
}

// The suggestion compares a key with every setting by edit distance (O(length of the key) each): a key of
// a megabyte (a fuzzer's input, a pasted file) took seconds; a length difference beyond the closeness
// limit now skips the comparison.
TEST_CASE("settings: a key of a megabyte is refused at once with no guess", "[app][settings]") {
  const std::string key = "training." + std::string(1 << 20, 'r');
  const auto start = std::chrono::steady_clock::now();
  std::string message = "accepted";
  try {
    load_config("", {{key, "1"}});
  } catch (const qgml::Error& e) {
    message = e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK_THAT(message, ContainsSubstring("unknown setting") && !ContainsSubstring("did you mean"));
  CHECK(seconds < 0.5);
}

TEST_CASE("settings: the automatic N grows with D and is recorded in words", "[app][settings]") {
  CHECK(qgml::default_matrix_size(1) == 32);
  CHECK(qgml::default_matrix_size(3) == 32);
  CHECK(qgml::default_matrix_size(4) == 16);
  CHECK(qgml::default_matrix_size(13) == 16);
  CHECK(qgml::default_matrix_size(14) == 16);
  CHECK(qgml::default_matrix_size(15) == 32);
  CHECK(qgml::default_matrix_size(30) == 32);
  CHECK(qgml::default_matrix_size(31) == 32);  // the cap: 64 before it
  CHECK(qgml::default_matrix_size(50) == 32);
  CHECK(qgml::default_matrix_size(100) == 32);
  CHECK(qgml::default_matrix_size_rule(3) == "N = 32 for D <= 3");
  CHECK(qgml::default_matrix_size_rule(5) == "the smallest power of two >= max(16, D + 2 = 7), at most 32");
  CHECK(qgml::default_matrix_size_rule(100) ==
        "the smallest power of two >= max(16, D + 2 = 102), at most 32; the metric's rank is then at most "
        "2 (N - 1) = 62: set model.N for a larger intrinsic dimension");
}
