// The gap rule of geometry/dimension_estimate.hpp (docs/dimension.md, "The gap rule") and the summary
// of per-point estimates, on spectra built by hand, including the cases that motivated each step.
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <vector>

#include "qgml/geometry/dimension_estimate.hpp"

using namespace qgml;

namespace {
// The defaults of DimensionEstimatorSettings.
int rule(const std::vector<double>& e, double floor = 1e-3, double exponent = 0.75) {
  return estimate_dimension_from_descending(e.data(), int(e.size()), 2.0, floor, exponent);
}
PointDimension<double> point(const std::vector<double>& e) {
  return estimate_point_dimension(e.data(), int(e.size()), 2.0, 1e-3, 0.75);
}
}  // namespace

TEST_CASE("gap rule: clear spectra give the number of tangent directions", "[geometry][dimension]") {
  CHECK(rule({0.8, 0.8, 1e-4}) == 2);  // sphere in R^3
  CHECK(rule({1.0, 1e-3 * 1.5, 1e-5}) == 1);
  CHECK(rule({0.95, 0.06}) == 1);                  // circle in R^2
  CHECK(rule({1.08, 0.94}) == 2);                  // no gap: both directions tangent (a memorised noisy circle)
  CHECK(rule({1.0, 0.9, 0.8, 0.01, 0.009}) == 3);  // D >= 4: the gap after the third eigenvalue
  // A 10-sphere in R^11 (the median spectrum of a trained N = 8 model): the tangent eigenvalues spread
  // over a factor of 90, the normal one is 60 times below the smallest of them.
  CHECK(rule({1.0, 0.81, 0.62, 0.49, 0.37, 0.26, 0.16, 0.084, 0.035, 0.0112, 1.8e-4}) == 10);
}

TEST_CASE("gap rule: the metric vanishing or rounding noise", "[geometry][dimension]") {
  CHECK(rule({0, 0, 0, 0}) == 0);
  CHECK(rule({-1e-17, -2e-17}) == 0);
  CHECK(rule({0.8, 0.8, -3e-8}) == 2);  // a zero eigenvalue of either sign
  CHECK(rule({0.8, 0.8, 3e-8}) == 2);
}

TEST_CASE("gap rule: eigenvalues below the noise floor are not directions", "[geometry][dimension]") {
  // The 1-d curve in R^13 that read 12 at 30 % of its points: a true first gap of 23, then a slowly
  // decaying tail whose last eigenvalue is 64 times below the one before it. With the old rule (no
  // floor, the largest ratio) the tail wins; below the floor it is not a direction, and the first gap
  // is also preferred over a larger later one.
  const std::vector<double> curve = {1.0,   1.0 / 23, 0.03,  0.02,  0.015,  0.01,       0.008,
                                     0.006, 0.004,    0.003, 0.002, 0.0015, 0.0015 / 64};
  CHECK(rule(curve, 100 * 2.2e-16, 1.0) == 12);  // the old rule
  CHECK(rule(curve) == 1);
  // All directions above the floor without a gap among them: d = their number (here 2 of 3).
  CHECK(rule({1.0, 0.9, 1e-6}) == 2);
  CHECK(rule({1.0, 0.9, 0.8}) == 3);
}

TEST_CASE("gap rule: the first of two comparable gaps wins, a much larger later one still wins",
          "[geometry][dimension]") {
  // rho = 23 then 64: log 23 / log 64 = 0.75 >= the exponent 0.75, so the first gap is significant.
  const std::vector<double> two_gaps = {1.0, 1.0 / 23, 1.0 / 23 / 64};
  CHECK(rule(two_gaps, 1e-6) == 1);
  CHECK(rule(two_gaps, 1e-6, 1.0) == 2);  // the largest gap alone
  // rho = 3 then 1000: the small early ratio is a spread of tangent eigenvalues, not the gap.
  CHECK(rule({1.0, 1.0 / 3, 1.0 / 3000}, 1e-6) == 2);
  // Below min_gap_ratio nothing counts, however the ratios compare.
  CHECK(rule({1.0, 0.7, 0.5}) == 3);
}

TEST_CASE("gap rule: per-point confidence", "[geometry][dimension]") {
  const auto strong = point({1.0, 1e-4 * 1.0001, 1e-4});  // one gap, nothing else
  CHECK(strong.dimension == 1);
  CHECK(strong.confidence > 0.99);
  CHECK(std::abs(strong.gap_ratio - 1000) < 1e-9);  // both small eigenvalues are below the floor
  const auto split = point({1.0, 0.1, 0.01});       // two equal gaps of 10: the first is taken, nothing to choose
  CHECK(split.dimension == 1);
  CHECK(split.confidence < 1e-12);
  const auto none = point({1.0, 0.99});  // far from any gap: sure that both directions are tangent
  CHECK(none.dimension == 2);
  CHECK(none.confidence > 0.98);
  const auto almost = point({1.0, 0.55});  // ratio 1.82, just below the threshold 2
  CHECK(almost.dimension == 2);
  CHECK(almost.confidence < 0.15);
  CHECK(point({0.0, 0.0}).confidence == 0.0);
}

TEST_CASE("dimension summary: mode, median, mean and fractions from the histogram", "[geometry][dimension]") {
  const DimensionSummary s = summarize_dimensions({0, 3, 6, 1});
  CHECK(s.ambient_dimension == 3);
  CHECK(s.points == 10);
  CHECK(s.mode == 2);
  CHECK(s.runner_up == 1);
  CHECK(s.median == 2.0);
  CHECK(std::abs(s.mean - (3 + 12 + 3) / 10.0) < 1e-15);
  CHECK(std::abs(s.fraction()[2] - 0.6) < 1e-15);
  CHECK_FALSE(s.uncertain);
  CHECK(s.verdict == "clear");
  const DimensionSummary all_two = summarize_dimensions({0, 0, 5, 0});  // the case that crashed the reference
  CHECK(all_two.mode == 2);
  CHECK(all_two.runner_up == -1);
  CHECK(all_two.median == 2.0);
  CHECK(summarize_dimensions({0, 1, 1}).median == 1.5);
}

TEST_CASE("dimension summary: ties and weak modes are called uncertain", "[geometry][dimension]") {
  // Counts 4/3/4 at d = 1, 2, 3 used to be reported as 1, silently. The tie is said, and the tied
  // value nearest the median (2) is taken: here both are 1 away, so the smaller.
  const DimensionSummary tie = summarize_dimensions({0, 4, 3, 4});
  CHECK(tie.uncertain);
  CHECK(tie.verdict.find("tied") != std::string::npos);
  CHECK(tie.mode == 1);
  // A tie where one value is nearer the median: 1, 3, 3 at d = 0, 1, 3 and 3 at d = 2 -> median 2.
  const DimensionSummary near = summarize_dimensions({0, 3, 3, 1});
  CHECK(near.uncertain);
  CHECK(near.mode == 2);
  // A weak mode (41 %).
  const DimensionSummary weak = summarize_dimensions({0, 41, 30, 29});
  CHECK(weak.mode == 1);
  CHECK(weak.uncertain);
  CHECK(weak.verdict.find("only 41 %") != std::string::npos);
  // A runner-up with 80 % of the mode's count.
  const DimensionSummary close = summarize_dimensions({0, 55, 44, 1});
  CHECK(close.uncertain);
  CHECK(close.verdict.find("nearly as frequent") != std::string::npos);
  // No point with an estimate.
  CHECK(summarize_dimensions({0, 0, 0}).uncertain);
}
