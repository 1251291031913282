// The program's settings table (apps/config): "auto" where a setting allows it, integers read as they
// were validated.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "qgml/common/error.hpp"
#include "qgml/model/default_matrix_size.hpp"

#include "config.hpp"

using namespace qgml::app;

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

TEST_CASE("settings: an integer is read as it was validated", "[app][settings]") {
  // "2e2" passes as an integer-valued number; it used to be read by stol as 2.
  CHECK(load_config("", {{"data.points", "2e2"}}).integer("data.points") == 200);
  CHECK(load_config("", {{"data.seed", "9007199254740993"}}).integer("data.seed") == 9007199254740993L);  // > 2^53
  CHECK_THROWS_WITH(load_config("", {{"training.epochs", "0x3"}}),
                    Catch::Matchers::ContainsSubstring("expected an integer"));
  CHECK_THROWS_WITH(load_config("", {{"training.epochs", "2.5"}}),
                    Catch::Matchers::ContainsSubstring("expected an integer"));
}

TEST_CASE("settings: the automatic N grows with D and is recorded in words", "[app][settings]") {
  CHECK(qgml::default_matrix_size(1) == 32);
  CHECK(qgml::default_matrix_size(3) == 32);
  CHECK(qgml::default_matrix_size(4) == 16);
  CHECK(qgml::default_matrix_size(13) == 16);
  CHECK(qgml::default_matrix_size(14) == 16);
  CHECK(qgml::default_matrix_size(15) == 32);
  CHECK(qgml::default_matrix_size(50) == 64);
  CHECK(qgml::default_matrix_size_rule(3) == "N = 32 for D <= 3");
  CHECK(qgml::default_matrix_size_rule(5) == "the smallest power of two >= max(16, D + 2 = 7)");
}
