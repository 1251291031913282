// The packed kernels' scratch on a cache line (common/line_aligned_scratch.hpp): line_aligned moves a
// pointer to the next 64-byte boundary and no further, and LineAlignedScratch asks for the slack that
// keeps the aligned array inside the team scratch Kokkos hands out, for every team, at both scratch levels.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "qgml/common/line_aligned_scratch.hpp"
#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/linalg/hermitian_eigensolver_packed.hpp"

#include "test_support.hpp"

using namespace qgml;

TEMPLATE_TEST_CASE("line_aligned: the first 64-byte boundary at or after the pointer", "[scratch]", double, float) {
  using Real = TestType;
  STATIC_REQUIRE(line_aligned_scratch_reals<Real>(100) == 100 + 64 / sizeof(Real));
  std::vector<Real> buffer(4 * 64 / sizeof(Real));
  const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(buffer.data());
  for (std::size_t i = 0; i < 2 * 64 / sizeof(Real); ++i) {
    Real* const p = buffer.data() + i;
    Real* const q = line_aligned(p);
    const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p), b = reinterpret_cast<std::uintptr_t>(q);
    INFO("element " << i << " of a buffer at " << base % 64 << " bytes past a line");
    CHECK(b % 64 == 0);
    CHECK(b >= a);
    CHECK(b - a < 64);
  }
}

TEMPLATE_TEST_CASE("LineAlignedScratch: a pack's scratch from Kokkos team scratch starts on a line and stays inside it",
                   "[scratch]", QGML_TEST_HOST_CONFIGS) {
  using Space = typename TestType::execution_space;
  using Real = typename TestType::real_type;
  using policy_type = Kokkos::TeamPolicy<Space>;
  using member_type = typename policy_type::member_type;
  using scratch_view = Kokkos::View<Real*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  using probe_view = Kokkos::View<double*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  constexpr int width = linalg::packed_eigh_width<Real>;
  for (const int n : {3, 8, 33, 64}) {
    const LineAlignedScratch<scratch_view> scratch{std::size_t(linalg::packed_eigh_scratch_reals(n, width))};
    const std::size_t need = scratch.reals;
    CHECK(scratch.bytes() % 16 == 0);
    // A probe of `shift` doubles carved first gives the team scratch's start and moves the pack's scratch
    // by 8 shift bytes, so that every distance from a line occurs; the pack's arrays must then end within
    // the bytes the team was given. Without the slack, shifts of 24 to 40 bytes overran.
    for (int shift = 1; shift <= 8; ++shift) {
      const std::size_t bytes = team_scratch_bytes<probe_view>(shift) + scratch.bytes();
      const int teams = 7;
      const int level = scratch_level(policy_type(Space(), teams, 1), bytes, n, "test");
      Kokkos::View<int*, typename Space::memory_space> bad("qgml::test::bad", teams);
      Kokkos::parallel_for(
          "qgml::test::line_aligned", policy_type(Space(), teams, 1).set_scratch_size(level, Kokkos::PerTeam(bytes)),
          KOKKOS_LAMBDA(const member_type& member) {
            const probe_view probe(member.team_scratch(level), shift);
            Real* const first = scratch.data(member, level);
            const char* const end = reinterpret_cast<const char*>(probe.data()) + bytes;
            int code = 0;
            if (reinterpret_cast<std::uintptr_t>(first) % 64 != 0) code |= 1;
            if (reinterpret_cast<const char*>(first + need) > end) code |= 2;
            // Every element of the pack's arrays is then one whole line.
            const linalg::PackedEighArrays<width, Real> p(n, first);
            if (reinterpret_cast<std::uintptr_t>(p.zr) % 64 != 0 || reinterpret_cast<std::uintptr_t>(p.pi) % 64 != 0)
              code |= 4;
            bad(member.league_rank()) = code;
          });
      const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), bad);
      for (int t = 0; t < teams; ++t) {
        INFO("N = " << n << ", shift " << 8 * shift << " bytes, team " << t << ", level " << level
                    << ": 1 misaligned, 2 past the end, 4 array off a line");
        CHECK(h(t) == 0);
      }
    }
  }
}
