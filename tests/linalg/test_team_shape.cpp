// TeamShape (linalg/team_shape.hpp): the automatic sizes of the lanes mapping, the launch a shape resolves
// to on a host space (teams, scratch per problem and per team), and the errors for impossible shapes.
// The kernels in each shape are tested where they are used (batched_eigh, the team loss-gradient, the
// team geometry and energy kernels).
#include <catch2/catch_test_macros.hpp>

#include <string>

#include "qgml/common/error.hpp"
#include "qgml/linalg/team_shape.hpp"

#include "test_support.hpp"

using namespace qgml;

TEST_CASE("team_shape_default_lanes: a power of two >= N / 2 up to N = 16, a warp above", "[team_shape]") {
  CHECK(team_shape_default_lanes(1) == 2);
  CHECK(team_shape_default_lanes(3) == 2);
  CHECK(team_shape_default_lanes(4) == 2);
  CHECK(team_shape_default_lanes(5) == 4);
  CHECK(team_shape_default_lanes(8) == 4);
  CHECK(team_shape_default_lanes(9) == 8);
  CHECK(team_shape_default_lanes(16) == 8);
  CHECK(team_shape_default_lanes(17) == 32);
  CHECK(team_shape_default_lanes(32) == 32);
  CHECK(team_shape_default_lanes(64) == 32);
  CHECK(team_shape_default_lanes(4096) == 32);
}

TEST_CASE("complete_lanes_shape: problems per team from the block size, fewer to stay in level 0", "[team_shape]") {
  const std::size_t level0 = 40000;
  // 1000 bytes per problem: 128 / 4 = 32 problems of N = 8 fit.
  TeamShape s = complete_lanes_shape(
      TeamShape::with_lanes(0, 0), 8, [](std::size_t p) { return 1000 * p; }, level0);
  CHECK(s.lanes == 4);
  CHECK(s.per_team == 32);
  // 2100 bytes per problem: 19 fit 40000 bytes.
  s = complete_lanes_shape(
      TeamShape::with_lanes(0, 0), 8, [](std::size_t p) { return 2100 * p; }, level0);
  CHECK(s.per_team == 19);
  // 18000 bytes per problem at N = 32: 4 per team would need level 1; 2 fit level 0.
  s = complete_lanes_shape(
      TeamShape::with_lanes(0, 0), 32, [](std::size_t p) { return 18000 * p; }, level0);
  CHECK(s.lanes == 32);
  CHECK(s.per_team == 2);
  // One problem does not fit level 0 anyway: the block size decides.
  s = complete_lanes_shape(
      TeamShape::with_lanes(16, 0), 64, [](std::size_t p) { return 70000 * p; }, level0);
  CHECK(s.lanes == 16);
  CHECK(s.per_team == 8);
  // Requested sizes are kept.
  s = complete_lanes_shape(
      TeamShape::with_lanes(4, 3), 64, [](std::size_t p) { return 70000 * p; }, level0);
  CHECK(s.lanes == 4);
  CHECK(s.per_team == 3);
}

TEST_CASE("resolve_team_shape on a host space", "[team_shape]") {
  using Host = Kokkos::DefaultHostExecutionSpace;
  SECTION("automatic: one problem per team of one thread") {
    const auto launch = resolve_team_shape<double, Host>(TeamShape{}, 10, 8, 301, "test kernel");
    CHECK(!launch.lanes());
    CHECK(launch.lanes_per_problem() == 0);
    CHECK(launch.shape.mapping == TeamShape::Mapping::team);
    CHECK(launch.shape.threads == 1);
    CHECK(launch.teams == 10);
    CHECK(launch.stride == 302);  // a multiple of 16 bytes
    CHECK(launch.bytes % 16 == 0);
    CHECK(launch.bytes >= 302 * sizeof(double));
    CHECK(to_string(launch.shape) == "one per team of 1 threads");
  }
  SECTION("lanes: problems per team, the last team partly empty; float strides of 16 bytes") {
    const auto launch = resolve_team_shape<float, Host>(TeamShape::with_lanes(4, 3), 10, 8, 301, "test kernel");
    CHECK(launch.lanes());
    CHECK(launch.lanes_per_problem() == 4);
    CHECK(launch.teams == 4);
    CHECK(launch.stride == 304);
    CHECK(launch.bytes >= 3 * 304 * sizeof(float));
    CHECK(launch.bytes % 16 == 0);
    CHECK(to_string(launch.shape) == "3 per team x 4 lanes");
  }
  SECTION("scratch over level 0 goes to level 1") {
    const std::size_t reals = std::size_t(Kokkos::TeamPolicy<Host>::scratch_size_max(0)) / sizeof(double) + 10;
    const auto launch = resolve_team_shape<double, Host>(TeamShape{}, 3, 64, reals, "test kernel");
    CHECK(launch.level == 1);
  }
  SECTION("lanes that are not a power of two are refused, naming the kernel and the value") {
    try {
      (void)resolve_team_shape<double, Host>(TeamShape::with_lanes(3, 2), 10, 8, 301, "test kernel");
      FAIL("no error");
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK(what.find("test kernel") != std::string::npos);
      CHECK(what.find("power of two") != std::string::npos);
      CHECK(what.find("got 3") != std::string::npos);
    }
  }
}
