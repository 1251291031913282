// qgml estimate's and qgml eval's work on files (driver/estimate/estimate_from_files.hpp,
// driver/evaluate/evaluate_files.hpp) on the fuzzy sphere A_k = J_k / j at N = 3 (j = 1) and points of the
// unit sphere, whose closed forms (docs/math.md 7) are xbar = x, sigma^2 = c^2 j = 1 and a 2-dimensional
// quantum metric: the loss is w, the dimension 2; and the refusals, which write nothing.
#include <Kokkos_Core.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "qgml/common/error.hpp"
#include "qgml/io/configuration_io.hpp"
#include "qgml/model/initializers.hpp"

#include "estimate/estimate_from_files.hpp"
#include "evaluate/evaluate_files.hpp"
#include "temp_dir.hpp"

using namespace qgml;
using namespace qgml::app;
using Catch::Matchers::ContainsSubstring;

namespace {

// The fuzzy sphere at N = 3 with c = 1 / j, as configuration.npy in `dir`.
std::string fuzzy_sphere_file(const test::TempDir& dir) {
  const Kokkos::DefaultExecutionSpace exec;
  const std::string path = dir.file("fuzzy_sphere.npy");
  save_configuration(path, fuzzy_sphere_configuration<double>(3, 1.0, exec), exec);
  return path;
}

// `count` points of the unit sphere on a Fibonacci lattice, `columns` coordinates each (the first three
// on the sphere, the others 0), as a CSV file in `dir`.
std::string sphere_file(const test::TempDir& dir, int count, int columns = 3) {
  std::ostringstream csv;
  csv.precision(17);
  for (int t = 0; t < count; ++t) {
    const double z = -1 + 2 * (t + 0.5) / count, a = t * M_PI * (3 - std::sqrt(5.0)), r = std::sqrt(1 - z * z);
    csv << r * std::cos(a) << "," << r * std::sin(a) << "," << z;
    for (int k = 3; k < columns; ++k) csv << ",0";
    csv << "\n";
  }
  return dir.write("sphere" + std::to_string(columns) + ".csv", csv.str());
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("evaluate_files: the fuzzy sphere's loss is w, its terms and files as the closed forms say", "[app][eval]") {
  const test::TempDir dir;
  EvaluationRequest r;
  r.matrices = fuzzy_sphere_file(dir);
  r.data = sphere_file(dir, 200);
  r.out = dir.file("out/eval");  // created with its parent
  r.loss.w = 0.25;
  for (const bool single : {false, true}) {
    r.single_precision = single;
    const double tolerance = single ? 1e-5 : 1e-12;
    const EvaluationReport e = evaluate_files(r);
    CHECK(e.points == 200);
    CHECK(e.reconstruction == Catch::Approx(0).margin(tolerance));
    CHECK(e.fluctuation == Catch::Approx(1).margin(tolerance));
    CHECK(e.loss == Catch::Approx(0.25).margin(tolerance));
    CHECK(e.penalty == 0);
    const nlohmann::json loss = read_json(r.out + "/loss.json");
    CHECK(loss.at("loss").get<double>() == e.loss);
    CHECK(loss.at("w").get<double>() == 0.25);
    CHECK(loss.at("points").get<int>() == 200);
    for (const char* f : {"gradient.npy", "xbar.npy", "sigma2.npy", "energy.npy", "per_point.csv"})
      CHECK(std::filesystem::is_regular_file(r.out + "/" + f));
    std::ifstream csv(r.out + "/per_point.csv");
    std::string header;
    std::getline(csv, header);
    CHECK(header == "xbar0,xbar1,xbar2,sigma2,energy");
  }
}

TEST_CASE("evaluate_files: data of another D are refused before anything is written", "[app][eval]") {
  const test::TempDir dir;
  EvaluationRequest r;
  r.matrices = fuzzy_sphere_file(dir);
  r.data = sphere_file(dir, 20, 4);
  r.out = dir.file("eval");
  CHECK_THROWS_WITH(evaluate_files(r),
                    ContainsSubstring("have D = 4 coordinates") && ContainsSubstring("has D = 3 matrices"));
  CHECK_FALSE(std::filesystem::exists(r.out));
}

TEST_CASE("estimate_from_files: the fuzzy sphere reads 2 at every point, with its report and files",
          "[app][estimate]") {
  const test::TempDir dir;
  EstimateRequest r;
  r.matrices = fuzzy_sphere_file(dir);
  r.data = sphere_file(dir, 300);
  r.out = dir.file("estimate");
  const EstimateReport report = estimate_from_files(r);
  CHECK(report.writer);
  CHECK(report.d == 3);
  CHECK(report.n == 3);
  CHECK(report.analysis.summary.points == 300);
  CHECK(report.analysis.summary.mode == 2);
  REQUIRE(report.analysis.summary.histogram.size() > 2);
  CHECK(report.analysis.summary.histogram[2] == 300);
  CHECK_FALSE(report.analysis.summary.uncertain);
  const nlohmann::json summary = read_json(r.out + "/dimension_summary.json");
  CHECK(summary.at("min_gap_ratio").get<double>() == r.geometry.estimator.min_gap_ratio);
  CHECK(std::filesystem::is_regular_file(r.out + "/per_point.csv"));
}

TEST_CASE("estimate_from_files: refusals name the files and write nothing", "[app][estimate]") {
  const test::TempDir dir;
  EstimateRequest r;
  r.matrices = fuzzy_sphere_file(dir);
  r.out = dir.file("estimate");
  r.data = sphere_file(dir, 20, 4);
  CHECK_THROWS_WITH(estimate_from_files(r), ContainsSubstring("the data '" + r.data + "' have D = 4") &&
                                                ContainsSubstring("'" + r.matrices + "' has D = 3"));
  // Points so far out that |A| < eps |x|: no point has a finite ground state in double.
  r.data = dir.write("far.csv", "1e300,0,0\n0,1e300,0\n");
  CHECK_THROWS_WITH(estimate_from_files(r),
                    ContainsSubstring("no point has a finite ground state") && ContainsSubstring("double precision"));
  CHECK_FALSE(std::filesystem::exists(r.out));
}
