// The error bar of the global dimension estimate (geometry/dimension_interval.hpp; docs/dimension.md,
// "Error bars") on per-point spectra built by hand.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>

#include <vector>

#include "qgml/geometry/dimension_interval.hpp"

using namespace qgml;
using Catch::Matchers::WithinAbs;

namespace {
// count copies of each spectrum in `kinds` (row-major, D each), in that order.
std::vector<double> spectra(const std::vector<std::vector<double>>& kinds, const std::vector<int>& copies) {
  std::vector<double> e;
  for (std::size_t k = 0; k < kinds.size(); ++k)
    for (int c = 0; c < copies[k]; ++c) e.insert(e.end(), kinds[k].begin(), kinds[k].end());
  return e;
}
}  // namespace

TEST_CASE("dimension interval: one clear spectrum at every point has no spread", "[geometry][dimension][interval]") {
  const std::vector<double> e = spectra({{1.0, 0.9, 1e-4}}, {500});
  const DimensionInterval i = dimension_interval(e, std::vector<bool>(500, true), 3, {});
  CHECK(i.resamples == default_dimension_resamples);
  CHECK(i.low == 2);
  CHECK(i.high == 2);
  CHECK(i.error == 0);
  CHECK(i.mean_error == 0);
}

TEST_CASE("dimension interval: nearly tied estimates give an interval over both", "[geometry][dimension][interval]") {
  // 51 points read 2 and 49 read 1: bootstrap resamples of 100 points put the mode on either side.
  const std::vector<double> e = spectra({{1.0, 0.9, 1e-4}, {1.0, 1e-3 * 1.5, 1e-5}}, {51, 49});
  const DimensionInterval i = dimension_interval(e, std::vector<bool>(100, true), 3, {});
  CHECK(i.low == 1);
  CHECK(i.high == 2);
  CHECK(i.error > 0.2);
  CHECK(i.error < 0.6);
  // The mean 1.51 over 100 points of spread 0.5: standard error 0.05.
  CHECK_THAT(i.mean_error, WithinAbs(0.05, 0.015));
  // A clear majority: the mode stays.
  const std::vector<double> clear = spectra({{1.0, 0.9, 1e-4}, {1.0, 1e-3 * 1.5, 1e-5}}, {800, 200});
  const DimensionInterval j = dimension_interval(clear, std::vector<bool>(1000, true), 3, {});
  CHECK(j.low == 2);
  CHECK(j.high == 2);
}

TEST_CASE("dimension interval: a gap that moves with the rule's exponent widens it",
          "[geometry][dimension][interval]") {
  // Ratios 2, 12.5 and 22: at exponent 0.75 the first significant gap is 12.5 (22^0.75 = 10.2), d = 2;
  // at 0.85 only 22 counts (22^0.85 = 13.8), d = 3. A third of the resamples use 0.85.
  const std::vector<double> row = {1.0, 0.5, 0.04, 0.04 / 22, 0.04 / 22 / 1.5};
  const std::vector<double> e = spectra({row}, {300});
  const DimensionInterval i = dimension_interval(e, std::vector<bool>(300, true), 5, {});
  CHECK(i.low == 2);
  CHECK(i.high == 3);
  CHECK(i.error > 0.3);
  CHECK(i.mean_error == 0);  // at the chosen rule every point reads 2
}

TEST_CASE("dimension interval: failed points are left out; the same input gives the same interval",
          "[geometry][dimension][interval]") {
  std::vector<double> e = spectra({{1.0, 0.9, 1e-4}, {1.0, 1e-3 * 1.5, 1e-5}}, {60, 140});
  std::vector<bool> valid(200, true);
  for (int t = 60; t < 200; ++t) valid[std::size_t(t)] = false;  // only the d = 2 points count
  const DimensionInterval a = dimension_interval(e, valid, 3, {});
  CHECK(a.low == 2);
  CHECK(a.high == 2);
  const DimensionInterval b = dimension_interval(e, std::vector<bool>(200, true), 3, {});
  const DimensionInterval c = dimension_interval(e, std::vector<bool>(200, true), 3, {});
  CHECK(b.low == 1);
  CHECK(b.high == 1);
  CHECK(b.mean_error == c.mean_error);
  CHECK(dimension_interval(e, std::vector<bool>(200, false), 3, {}).resamples == 0);
  CHECK_THROWS(dimension_interval(e, std::vector<bool>(10, true), 3, {}));
}

TEST_CASE("dimension interval: the spread check's estimates move every rule's estimate with them",
          "[geometry][dimension][interval][spread]") {
  // The gap rule reads 2 at every point; the spread check promoted every point to 3
  // (geometry/tangent_spread.hpp): the interval is about 3. Checked estimates of the wrong length are
  // refused.
  const std::vector<double> e = spectra({{1.0, 0.9, 5e-3}}, {300});
  const std::vector<bool> valid(300, true);
  const DimensionInterval plain = dimension_interval(e, valid, 3, {});
  CHECK(plain.low == 2);
  CHECK(plain.high == 2);
  const DimensionInterval checked =
      dimension_interval(e, valid, 3, {}, default_dimension_resamples, 1, std::vector<int>(300, 3));
  CHECK(checked.low == 3);
  CHECK(checked.high == 3);
  CHECK(checked.error == 0);
  CHECK_THROWS(dimension_interval(e, valid, 3, {}, default_dimension_resamples, 1, std::vector<int>(299, 3)));
}
