// The JSON files qgml writes parse as JSON, keep their keys in order, carry doubles at full precision
// and write non-finite numbers as null.
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "qgml/common/error.hpp"
#include "qgml/geometry/dimension_estimate.hpp"
#include "qgml/train/training_settings.hpp"

#include "temp_dir.hpp"

using namespace qgml;
namespace fs = std::filesystem;

using qgml::test::TempDir;

namespace {

nlohmann::ordered_json parse(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::ordered_json::parse(in);  // throws if the file is not JSON
}

}  // namespace

TEST_CASE("history.json: full-precision doubles, null for the losses of an epoch with every batch skipped", "[io]") {
  TempDir dir;
  EpochRecord good;
  good.epoch = 1;
  good.total = 0.1 + 0.2;  // 0.30000000000000004: needs all 17 digits
  good.reconstruction = 1.0 / 3.0;
  good.batches = 5;
  good.seconds = 1e-7;
  EpochRecord skipped;
  skipped.epoch = 2;
  skipped.total = skipped.reconstruction = skipped.fluctuation = skipped.penalty =
      std::numeric_limits<double>::quiet_NaN();
  skipped.skipped_batches = 5;
  skipped.points_per_second = std::numeric_limits<double>::infinity();
  write_history_json(dir.file("history.json"), {good, skipped});
  const auto j = parse(dir.file("history.json"));
  REQUIRE(j.is_array());
  REQUIRE(j.size() == 2);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j[0].items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"epoch", "total", "reconstruction", "fluctuation", "penalty", "learning_rate",
                                         "degenerate_points", "skipped_batches", "eigh_failures", "batches", "seconds",
                                         "points_per_second"});
  CHECK(j[0]["total"].get<double>() == good.total);
  CHECK(j[0]["reconstruction"].get<double>() == good.reconstruction);
  CHECK(j[0]["seconds"].get<double>() == good.seconds);
  CHECK(j[0]["batches"] == 5);
  for (const char* key : {"total", "reconstruction", "fluctuation", "penalty", "points_per_second"})
    CHECK(j[1][key].is_null());
  CHECK(j[1]["skipped_batches"] == 5);
}

TEST_CASE("dimension_summary.json: the summary, then the extra fields as typed JSON values", "[io]") {
  TempDir dir;
  const DimensionSummary s = summarize_dimensions({0, 3, 6, 1});
  write_dimension_summary_json(dir.file("summary.json"), s,
                               JsonFields()
                                   .add("metric", "quantum")
                                   .add("failed_points", std::int64_t(2))
                                   .add("min_gap_ratio", 2.5)
                                   .add("note", std::string("a \"quoted\" \\ line\nbreak"))
                                   .add("complete", false));
  const auto j = parse(dir.file("summary.json"));
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"ambient_dimension", "points", "mode", "median", "mean", "runner_up",
                                         "uncertain", "verdict", "histogram", "fraction", "metric", "failed_points",
                                         "min_gap_ratio", "note", "complete"});
  CHECK(j["verdict"] == "clear");
  CHECK(j["uncertain"] == false);
  CHECK(j["runner_up"] == 1);
  CHECK(j["ambient_dimension"] == 3);
  CHECK(j["points"] == 10);
  CHECK(j["mode"] == 2);
  CHECK(j["mean"].get<double>() == s.mean);
  CHECK(j["histogram"].get<std::vector<long>>() == std::vector<long>{0, 3, 6, 1});
  CHECK(j["fraction"][1].get<double>() == s.fraction()[1]);
  CHECK(j["metric"] == "quantum");
  CHECK(j["failed_points"].is_number_integer());
  CHECK(j["failed_points"] == 2);
  CHECK(j["min_gap_ratio"] == 2.5);
  CHECK(j["note"] == "a \"quoted\" \\ line\nbreak");
  CHECK(j["complete"] == false);

  // An extra field may not replace one of the summary's.
  CHECK_THROWS_AS(write_dimension_summary_json(dir.file("twice.json"), s, JsonFields().add("points", 3)), Error);
  CHECK_FALSE(fs::exists(dir.file("twice.json")));
}
