#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "qgml/linalg/batched_eigh.hpp"

#include "linalg/eigh_fixtures.hpp"
#ifdef QGML_TEST_WITH_LAPACKE
#include "qgml/lapacke/batched_eigh.hpp"
#endif

using namespace qgml;
using namespace qgml::test;

namespace {

const int sizes[] = {1, 2, 3, 4, 7, 8, 16, 31, 32, 33, 64};

// One batch holding every matrix kind (twice, with different seeds), as rounded to Real; with count,
// the kinds repeat (new seeds) until there are count matrices (matrix t has kind t % kinds).
template <class Real>
std::vector<HostMatrix> make_batch(int n, int count = 0) {
  const int kinds = static_cast<int>(all_matrix_kinds().size());
  if (count <= 0) count = 2 * kinds;
  std::vector<HostMatrix> batch;
  for (int t = 0; t < count; ++t) {
    HostMatrix h = make_matrix(all_matrix_kinds()[t % kinds], n, 1000 * n + t / kinds);
    for (auto& x : h.a) x = cplx(double(Real(x.real())), double(Real(x.imag())));
    batch.push_back(h);
  }
  return batch;
}

template <class Real, class Mem>
MatrixStack<Real, Mem> to_device(const std::vector<HostMatrix>& batch, int n) {
  MatrixStack<Real, Mem> h("qgml::test::H", batch.size(), n, n);
  auto m = Kokkos::create_mirror_view(h);
  for (std::size_t t = 0; t < batch.size(); ++t)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        m(t, i, j) = complex_t<Real>(Real(batch[t](i, j).real()), Real(batch[t](i, j).imag()));
  Kokkos::deep_copy(h, m);
  return h;
}

template <class Real>
std::vector<double> reference_eigenvalues(const HostMatrix& h);

// Eigenvalues of a Hermitian matrix in double precision: cyclic Jacobi on the host, independent of
// every solver under test (converges for any Hermitian input; O(N^3) per sweep).
template <class Real>
std::vector<double> reference_eigenvalues(const HostMatrix& h0) {
  HostMatrix a = h0;
  const int n = a.n;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, diag = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) (i == j ? diag : off) += std::norm(a(i, j));
    if (off <= 1e-30 * (diag + off) || off == 0) break;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        const double apq = std::abs(a(p, q));
        if (apq == 0) continue;
        const cplx phase = a(p, q) / apq;  // a_pq = |a_pq| e^{i phi}
        const double theta = 0.5 * std::atan2(2 * apq, a(q, q).real() - a(p, p).real());
        const double c = std::cos(theta), s = std::sin(theta);
        // Rotation J with columns p, q: J_pp = c, J_qq = c, J_pq = s phase, J_qp = -s conj(phase).
        for (int k = 0; k < n; ++k) {  // A <- A J
          const cplx akp = a(k, p), akq = a(k, q);
          a(k, p) = c * akp - s * std::conj(phase) * akq;
          a(k, q) = s * phase * akp + c * akq;
        }
        for (int k = 0; k < n; ++k) {  // A <- J^H A
          const cplx apk = a(p, k), aqk = a(q, k);
          a(p, k) = c * apk - s * phase * aqk;
          a(q, k) = s * std::conj(phase) * apk + c * aqk;
        }
      }
  }
  std::vector<double> w(n);
  for (int i = 0; i < n; ++i) w[i] = a(i, i).real();
  std::sort(w.begin(), w.end());
  return w;
}

// batch_count > 0: that many matrices instead of two of every kind; the outputs then get `spare`
// extra rows holding sentinels, which must come back unchanged (no writes past the batch).
template <class Real, class Space, class Solve>
void check_solver(const Space& exec, const Solve& solve, const std::string& label, int batch_count = 0, int spare = 0,
                  int max_n = 1 << 30) {
  using Mem = typename Space::memory_space;
  for (int n : sizes) {
    if (n > max_n) continue;
    const auto batch = make_batch<Real>(n, batch_count);
    const int count = static_cast<int>(batch.size());
    auto h = to_device<Real, Mem>(batch, n);
    RealMatrix<Real, Mem> w("qgml::test::w", count + spare, n);
    MatrixStack<Real, Mem> v("qgml::test::V", count + spare, n, n);
    IntVector<Mem> info("qgml::test::info", count + spare);
    const auto spare_rows = Kokkos::make_pair(count, count + spare);
    Kokkos::deep_copy(Kokkos::subview(w, spare_rows, Kokkos::ALL), Real(42));
    Kokkos::deep_copy(Kokkos::subview(v, spare_rows, Kokkos::ALL, Kokkos::ALL), complex_t<Real>(Real(42)));
    Kokkos::deep_copy(Kokkos::subview(info, spare_rows), -7);
    solve(exec, h, w, v, info);
    auto wh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
    auto vh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    auto ih = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
    for (int t = count; t < count + spare; ++t) {
      INFO(label << ", N = " << n << ": spare output row " << t << " (batch of " << count << ") was written");
      int changed = ih(t) == -7 ? 0 : 1;
      for (int i = 0; i < n; ++i) {
        changed += wh(t, i) == Real(42) ? 0 : 1;
        for (int j = 0; j < n; ++j) changed += vh(t, i, j) == complex_t<Real>(Real(42)) ? 0 : 1;
      }
      CHECK(changed == 0);
    }
    for (int t = 0; t < count; ++t) {
      const MatrixKind kind = all_matrix_kinds()[t % all_matrix_kinds().size()];
      INFO(label << ", N = " << n << ", " << to_string(kind) << ", batch index " << t);
      REQUIRE(ih(t) == linalg::eigh_success);
      const auto wt = Kokkos::subview(wh, t, Kokkos::ALL);
      const auto vt = Kokkos::subview(vh, t, Kokkos::ALL, Kokkos::ALL);
      const EighCheck c = check_eigh(batch[t], wt, vt);
      CHECK(c.ascending);
      CHECK(c.residual <= eigh_tolerance<Real>());
      CHECK(c.orthogonality <= eigh_tolerance<Real>());
      const std::vector<double> ref = reference_eigenvalues<Real>(batch[t]);
      double hnorm = 0;
      for (auto x : batch[t].a) hnorm += std::norm(x);
      hnorm = std::max(std::sqrt(hnorm), 1e-300);
      double err = 0;
      for (int j = 0; j < n; ++j) err = std::max(err, std::abs(double(wt(j)) - ref[j]));
      CHECK(err / hnorm <= eigh_tolerance<Real>());
    }
  }
}

template <class Space>
int team_size_for_tests(const Space& exec) {
  return exec.concurrency() >= 2 ? 2 : 1;
}

}  // namespace

TEMPLATE_TEST_CASE("batched_eigh serial variant: residual, orthogonality, eigenvalues", "[eigh]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  check_solver<Real>(
      Space(),
      [](const Space& exec, auto h, auto w, auto v, auto info) {
        batched_eigh(exec, h, w, v, info, EighOptions{EighVariant::serial, 0});
      },
      "serial");
}

TEMPLATE_TEST_CASE("batched_eigh team variant: residual, orthogonality, eigenvalues", "[eigh]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const int ts = is_host_space_v<Space> ? team_size_for_tests(exec) : 0;
  check_solver<Real>(
      exec,
      [ts](const Space& e, auto h, auto w, auto v, auto info) {
        batched_eigh(e, h, w, v, info, EighOptions{EighVariant::team, ts});
      },
      "team (team size " + std::to_string(ts) + ")");
}

TEMPLATE_TEST_CASE("batched_eigh team variant with team sizes 2, 3, 5, 8 (as many as the space has threads)",
                   "[eigh][team-sizes]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  int expected = 0, ran = 0;
  for (int ts : {2, 3, 5, 8}) {
    if (is_host_space_v<Space> && ts > int(exec.concurrency())) continue;
    ++expected;
    check_solver<Real>(
        exec,
        [ts, &ran](const Space& e, auto h, auto w, auto v, auto info) {
          batched_eigh(e, h, w, v, info, EighOptions{EighVariant::team, ts});
          ++ran;
        },
        "team (team size " + std::to_string(ts) + ")");
  }
  CHECK(ran == expected * int(sizeof(sizes) / sizeof(sizes[0])));
}

// The team variant in the lanes mapping (linalg/team_shape.hpp): several matrices per team, each on the
// vector lanes of one thread (on CUDA a fraction of a warp; on host spaces one thread runs the lanes'
// iterations). Odd matrices per team (shared memory then starts 8 bytes off a 16-byte boundary on CUDA)
// and batches that leave the last team partly empty, whose spare output rows must stay unwritten.
TEMPLATE_TEST_CASE("batched_eigh team variant in the lanes mapping: several matrices per team", "[eigh][lanes]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  for (const TeamShape shape : {TeamShape::with_lanes(4, 3), TeamShape::with_lanes(8, 4), TeamShape::with_lanes(1, 2),
                                TeamShape::with_lanes(32, 1), TeamShape::with_lanes(0, 0)}) {
    EighOptions options;
    options.variant = EighVariant::team;
    options.team_shape = shape;
    const int per_team = shape.per_team > 0 ? shape.per_team : 4;
    check_solver<Real>(
        exec, [options](const Space& e, auto h, auto w, auto v, auto info) { batched_eigh(e, h, w, v, info, options); },
        "team, " + to_string(shape), 2 * per_team + 1, 3);
  }
}

// The team variant staged in team scratch (EighStaging::scratch: A copied in, Q^T formed over its
// reflectors, V copied out), in the lanes mapping (odd and automatic problems per team; a partly empty
// last team whose spare rows must stay unwritten) and in the team mapping. Every size of check_solver:
// at N = 64 the staged matrix (67 KB per problem in double) leaves shared memory for level 1 on GPUs.
// H is left as it was.
TEMPLATE_TEST_CASE("batched_eigh team variant staged in scratch", "[eigh][staging]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const int threads = is_host_space_v<Space> ? team_size_for_tests(exec) : 32;
  CHECK(resolve_eigh_staging<Kokkos::DefaultHostExecutionSpace>(EighStaging::automatic, 16) == EighStaging::none);
  CHECK(resolve_eigh_staging<Space>(EighStaging::scratch, 64) == EighStaging::scratch);
  CHECK(resolve_eigh_staging<Space>(EighStaging::none, 8) == EighStaging::none);
  CHECK(eigh_staged_ld(16) == 17);
  CHECK(eigh_staged_ld(17) == 17);
  CHECK(eigh_team_scratch_reals<Real>(16, EighStaging::scratch) ==
        eigh_team_scratch_reals<Real>(16, EighStaging::none) + 2 * 16 * 17);
  for (const TeamShape shape :
       {TeamShape::with_lanes(4, 3), TeamShape::with_lanes(0, 0), TeamShape::with_threads(threads)}) {
    EighOptions options;
    options.variant = EighVariant::team;
    options.team_shape = shape;
    options.staging = EighStaging::scratch;
    check_solver<Real>(
        exec, [options](const Space& e, auto h, auto w, auto v, auto info) { batched_eigh(e, h, w, v, info, options); },
        std::string("team, ") + to_string(shape) + ", staged in scratch", 7, 3);
  }
  // H unchanged by a staged solve, and the same eigenvalues as the unstaged one to rounding.
  const int n = 12;
  const auto batch = make_batch<Real>(n, 5);
  using Mem = typename Space::memory_space;
  auto h = to_device<Real, Mem>(batch, n);
  auto h0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h);
  RealMatrix<Real, Mem> w("qgml::test::w", 5, n), w2("qgml::test::w2", 5, n);
  MatrixStack<Real, Mem> v("qgml::test::V", 5, n, n);
  IntVector<Mem> info("qgml::test::info", 5);
  EighOptions staged;
  staged.variant = EighVariant::team;
  staged.staging = EighStaging::scratch;
  batched_eigh(exec, h, w, v, info, staged);
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h);
  int changed = 0;
  for (int t = 0; t < 5; ++t)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) changed += h1(t, i, j) == h0(t, i, j) ? 0 : 1;
  CHECK(changed == 0);
  EighOptions plain = staged;
  plain.staging = EighStaging::none;
  batched_eigh(exec, h, w2, v, info, plain);
  auto wh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
  auto wh2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w2);
  double diff = 0;  // relative to |H|_F
  for (int t = 0; t < 5; ++t) {
    double norm = 1e-300;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) norm += Kokkos::abs(h0(t, i, j)) * Kokkos::abs(h0(t, i, j));
    for (int i = 0; i < n; ++i) diff = std::max(diff, std::abs(double(wh(t, i)) - double(wh2(t, i))) / std::sqrt(norm));
  }
  CHECK(diff <= eigh_tolerance<Real>());
}

// EighOptions has one field per meaning of "team size": matrices_per_team for the serial variant (one
// thread per matrix), threads_per_matrix for the team variant; each variant ignores the other's field.
TEMPLATE_TEST_CASE("batched_eigh: matrices_per_team (serial) and threads_per_matrix (team)", "[eigh]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const int threads = is_host_space_v<Space> ? team_size_for_tests(exec) : 32;
  static_assert(std::is_same_v<decltype(EighOptions{}.matrices_per_team), int> &&
                std::is_same_v<decltype(EighOptions{}.threads_per_matrix), int>);
  EighOptions positional{EighVariant::team, 3, true};  // the order of the first three fields is kept
  CHECK(positional.threads_per_matrix == 3);
  CHECK(positional.warm_start);
  CHECK(positional.matrices_per_team == 0);
  // 1024 matrices per team is more than a GPU kernel of this size can launch with (team_size_max):
  // lowered to what it can, with the same results. On host spaces (team_size_max: the thread count or 1)
  // sizes up to N = 8 show the lowering; the 2049 checks at N = 64 took 40 s per configuration.
  for (int per_team : {1, threads, 1024}) {
    EighOptions serial;
    serial.variant = EighVariant::serial;
    serial.matrices_per_team = per_team;
    serial.threads_per_matrix = 7;  // not the serial variant's
    // A batch that leaves the last team partly empty.
    check_solver<Real>(
        exec, [serial](const Space& e, auto h, auto w, auto v, auto info) { batched_eigh(e, h, w, v, info, serial); },
        "serial, " + std::to_string(per_team) + " matrices per team", 2 * per_team + 1, 2,
        is_host_space_v<Space> && per_team == 1024 ? 8 : 1 << 30);
  }
  EighOptions team;
  team.variant = EighVariant::team;
  team.threads_per_matrix = threads;
  team.matrices_per_team = 5;  // not the team variant's
  check_solver<Real>(
      exec, [team](const Space& e, auto h, auto w, auto v, auto info) { batched_eigh(e, h, w, v, info, team); },
      "team, " + std::to_string(threads) + " threads per matrix");
}

// The packed variant (linalg/hermitian_eigensolver_packed.hpp) solves packs of W =
// linalg::packed_eigh_width<Real> matrices (8 doubles, 16 floats) per thread; batches of 16 (whole
// packs in double, one padded pack in float), 2 W + 3 and 5 (a padded last pack; no writes past the
// batch). On device spaces it is the serial variant.
TEMPLATE_TEST_CASE("batched_eigh packed variant: residual, orthogonality, eigenvalues", "[eigh][packed]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const auto solve = [](const Space& exec, auto h, auto w, auto v, auto info) {
    batched_eigh(exec, h, w, v, info, EighOptions{EighVariant::packed, 0});
  };
  const int width = linalg::packed_eigh_width<Real>;
  check_solver<Real>(Space(), solve, "packed");
  check_solver<Real>(Space(), solve, "packed, batch 2 W + 3", 2 * width + 3, width);
  check_solver<Real>(Space(), solve, "packed, batch 5", 5, width);
}

// Lanes of a pack are independent: the result of every matrix is the same, bit for bit, whether it is
// solved alone (a pack with padding) or in a pack with other matrices, NaN / Inf ones included; and
// the packed results agree with the serial variant.
TEMPLATE_TEST_CASE("batched_eigh packed variant: lanes do not interact, NaN lanes do not contaminate", "[eigh][packed]",
                   QGML_TEST_HOST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using Mem = typename TestType::memory_space;
  const Space exec;
  const int width = linalg::packed_eigh_width<Real>;
  // packed_real_z_min_n + 1: QL's rotations on a real Z; packed_staggered_min_n: the reduction's
  // staggered arrays
  for (int n : {3, 4, 8, 16, linalg::packed_real_z_min_n + 1, linalg::packed_staggered_min_n}) {
    const int count = width + 3;
    std::vector<HostMatrix> batch = make_batch<Real>(n, count);
    batch[2](1, 2) = cplx(std::numeric_limits<double>::quiet_NaN(), 0);
    batch[5](0, 0) = cplx(0, std::numeric_limits<double>::infinity());
    batch[width + 1](n - 1, 0) = cplx(-std::numeric_limits<double>::infinity(), 1);
    auto h = to_device<Real, Mem>(batch, n);
    RealMatrix<Real, Mem> w("qgml::test::w", count, n), ws("qgml::test::w", count, n);
    MatrixStack<Real, Mem> v("qgml::test::V", count, n, n), vs("qgml::test::V", count, n, n);
    IntVector<Mem> info("qgml::test::info", count), infos("qgml::test::info", count);
    batched_eigh(exec, h, w, v, info, EighOptions{EighVariant::packed, 0});
    batched_eigh(exec, h, ws, vs, infos, EighOptions{EighVariant::serial, 0});
    for (int t = 0; t < count; ++t) {
      const bool bad = t == 2 || t == 5 || t == width + 1;
      INFO("N = " << n << ", batch index " << t << (bad ? " (non-finite)" : ""));
      CHECK(info(t) == (bad ? linalg::eigh_non_finite_input : linalg::eigh_success));
      CHECK(info(t) == infos(t));
      if (bad) {
        int nans = 0;
        for (int i = 0; i < n; ++i) {
          nans += std::isnan(w(t, i)) ? 1 : 0;
          for (int j = 0; j < n; ++j) nans += (std::isnan(v(t, i, j).real()) && std::isnan(v(t, i, j).imag())) ? 1 : 0;
        }
        CHECK(nans == n + n * n);
        continue;
      }
      // Alone: a batch of one matrix, the other lanes padding.
      auto h1 = to_device<Real, Mem>({batch[t]}, n);
      RealMatrix<Real, Mem> w1("qgml::test::w", 1, n);
      MatrixStack<Real, Mem> v1("qgml::test::V", 1, n, n);
      IntVector<Mem> info1("qgml::test::info", 1);
      batched_eigh(exec, h1, w1, v1, info1, EighOptions{EighVariant::packed, 0});
      CHECK(info1(0) == linalg::eigh_success);
      int differ = 0;
      double max_dw = 0;
      for (int i = 0; i < n; ++i) {
        differ += w1(0, i) == w(t, i) ? 0 : 1;
        for (int j = 0; j < n; ++j) differ += v1(0, i, j) == v(t, i, j) ? 0 : 1;
        max_dw = std::max(max_dw, std::abs(double(w(t, i)) - double(ws(t, i))));
      }
      CHECK(differ == 0);
      const EighCheck c =
          check_eigh(batch[t], Kokkos::subview(w, t, Kokkos::ALL), Kokkos::subview(v, t, Kokkos::ALL, Kokkos::ALL));
      CHECK(c.ascending);
      CHECK(c.residual <= eigh_tolerance<Real>());
      CHECK(c.orthogonality <= eigh_tolerance<Real>());
      double hnorm = 0;
      for (auto x : batch[t].a) hnorm += std::norm(x);
      CHECK(max_dw <= eigh_tolerance<Real>() * std::max(1.0, std::sqrt(hnorm)));
    }
  }
}

TEMPLATE_TEST_CASE("automatic variant: packed on host spaces for 2 <= N <= 64, never on devices or above the limit",
                   "[eigh][packed]", QGML_TEST_CONFIGS) {
  using Space = typename TestType::execution_space;
  const bool host = is_host_space_v<Space>;
  for (int n : {1, 2, 3, 8, 16, 64, 65}) {
    INFO("N = " << n);
    const EighVariant v = resolve_eigh_variant<Space>(EighVariant::automatic, n);
    if (host)
      CHECK(v == (n >= 2 && n <= 64 ? EighVariant::packed : EighVariant::serial));
    else
      CHECK(v != EighVariant::packed);
    CHECK(resolve_eigh_variant<Space>(EighVariant::packed, n) == (host ? EighVariant::packed : EighVariant::serial));
    CHECK(resolve_eigh_variant<Space>(EighVariant::serial, n) == EighVariant::serial);
  }
  CHECK(resolve_eigh_variant<Space>(EighVariant::packed, eigh_packed_limit_n + 1) == EighVariant::serial);
}

#ifdef QGML_TEST_WITH_LAPACKE
TEMPLATE_TEST_CASE("LAPACKE backend: residual, orthogonality, eigenvalues", "[eigh][lapacke]", QGML_TEST_HOST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  check_solver<Real>(
      Space(), [](const Space& exec, auto h, auto w, auto v, auto info) { lapacke::batched_eigh(exec, h, w, v, info); },
      "lapacke");
}
#endif

TEMPLATE_TEST_CASE("batched_eigh reports NaN and Inf input through info, without hanging", "[eigh]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using Mem = typename TestType::memory_space;
  const Space exec;
  for (auto variant : {EighVariant::serial, EighVariant::team, EighVariant::packed}) {
    const int n = 5;
    std::vector<HostMatrix> batch{make_matrix(MatrixKind::random, n, 1), make_matrix(MatrixKind::random, n, 2),
                                  make_matrix(MatrixKind::random, n, 3)};
    batch[0](2, 3) = cplx(std::numeric_limits<double>::quiet_NaN(), 0);
    batch[2](4, 4) = cplx(std::numeric_limits<double>::infinity(), 0);
    auto h = to_device<Real, Mem>(batch, n);
    RealMatrix<Real, Mem> w("qgml::test::w", 3, n);
    MatrixStack<Real, Mem> v("qgml::test::V", 3, n, n);
    IntVector<Mem> info("qgml::test::info", 3);
    const int ts = (variant == EighVariant::team && is_host_space_v<Space>) ? team_size_for_tests(exec) : 0;
    batched_eigh(exec, h, w, v, info, EighOptions{variant, ts});
    auto ih = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
    auto wh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
    CHECK(ih(0) == linalg::eigh_non_finite_input);
    CHECK(ih(1) == linalg::eigh_success);
    CHECK(ih(2) == linalg::eigh_non_finite_input);
    CHECK(std::isnan(wh(0, 0)));
    CHECK(std::isfinite(wh(1, 0)));
    CHECK(count_eigh_failures(exec, info) == 2);
  }
}

TEMPLATE_TEST_CASE("batched_eigh rejects mismatched shapes with a clear error", "[eigh]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using Mem = typename TestType::memory_space;
  MatrixStack<Real, Mem> h("qgml::test::H", 2, 3, 3);
  RealMatrix<Real, Mem> w("qgml::test::w", 2, 4);
  MatrixStack<Real, Mem> v("qgml::test::V", 2, 3, 3);
  IntVector<Mem> info("qgml::test::info", 2);
  CHECK_THROWS_AS(batched_eigh(Space(), h, w, v, info), qgml::Error);
}

TEMPLATE_TEST_CASE("warm start: from a nearby basis, Jacobi converges in few sweeps to the same eigenpairs",
                   "[eigh][warm]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using Mem = typename TestType::memory_space;
  const Space exec;
  for (int n : {1, 2, 3, 4, 8, 16, 33}) {
    auto batch = make_batch<Real>(n);
    const int count = static_cast<int>(batch.size());
    // Cold solve for the starting basis, then perturb every matrix a little (the next training step).
    auto h = to_device<Real, Mem>(batch, n);
    RealMatrix<Real, Mem> w("qgml::test::w", count, n);
    MatrixStack<Real, Mem> v("qgml::test::V", count, n, n);
    IntVector<Mem> info("qgml::test::info", count), sweeps("qgml::test::sweeps", count);
    batched_eigh(exec, h, w, v, info);
    std::vector<HostMatrix> next = batch;
    for (std::size_t t = 0; t < next.size(); ++t) {
      const HostMatrix e = make_matrix(MatrixKind::random, n, 555 + t);
      for (int i = 0; i < n * n; ++i) {
        const cplx z = next[t].a[i] + 1e-3 * e.a[i];
        next[t].a[i] = cplx(double(Real(z.real())), double(Real(z.imag())));
      }
    }
    auto h2 = to_device<Real, Mem>(next, n);
    batched_eigh(exec, h2, w, v, info, EighOptions{EighVariant::serial, 0, true}, sweeps);
    auto wh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
    auto vh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    auto ih = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
    auto sh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sweeps);
    for (int t = 0; t < count; ++t) {
      INFO("N = " << n << ", " << to_string(all_matrix_kinds()[t % all_matrix_kinds().size()]) << ", sweeps " << sh(t));
      REQUIRE(ih(t) == linalg::eigh_success);
      const EighCheck c =
          check_eigh(next[t], Kokkos::subview(wh, t, Kokkos::ALL), Kokkos::subview(vh, t, Kokkos::ALL, Kokkos::ALL));
      CHECK(c.ascending);
      CHECK(c.residual <= eigh_tolerance<Real>());
      CHECK(c.orthogonality <= eigh_tolerance<Real>());
      // Quadratic convergence from a nearby basis where the perturbation is small against the gaps;
      // for degenerate spectra the perturbation picks new eigenvectors and Jacobi starts afresh.
      const MatrixKind kind = all_matrix_kinds()[t % all_matrix_kinds().size()];
      if (kind == MatrixKind::random || kind == MatrixKind::diagonal || kind == MatrixKind::fuzzy_sphere) {
        CHECK(sh(t) <= 3);
      }
      CHECK(sh(t) <= linalg::jacobi_max_sweeps);
      const std::vector<double> ref = reference_eigenvalues<Real>(next[t]);
      double hn = 0;
      for (auto x : next[t].a) hn += std::norm(x);
      for (int j = 0; j < n; ++j)
        CHECK(std::abs(wh(t, j) - ref[j]) <= eigh_tolerance<Real>() * std::max(1.0, std::sqrt(hn)));
    }
  }
}
