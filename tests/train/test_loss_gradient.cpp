#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <limits>

#include "qgml/model/initializers.hpp"
#include "qgml/train/loss_gradient.hpp"
#include "qgml/train/trainer.hpp"

#include "test_support.hpp"
#include "train/loss_gradient_on_host.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

HostMatrices random_direction(int d, int n, std::uint64_t seed) { return gaussian_hermitian_matrices(d, n, 1.0, seed); }

// Tr(G E) summed over the matrices: the directional derivative along the Hermitian direction E.
double pair(const HostMatrices& g, const HostMatrices& e) {
  double s = 0;
  for (int k = 0; k < g.D; ++k)
    for (int i = 0; i < g.N; ++i)
      for (int j = 0; j < g.N; ++j) s += (g(k, i, j) * e(k, j, i)).real();
  return s;
}

}  // namespace

TEST_CASE("analytic gradient equals central finite differences along random Hermitian directions", "[gradient]") {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const EighOptions team{EighVariant::team, Space().concurrency() >= 2 ? 2 : 1};
  const std::vector<std::pair<PenaltyKind, double>> penalties{
      {PenaltyKind::none, 0.0}, {PenaltyKind::frobenius, 0.1}, {PenaltyKind::frobenius_squared, 0.1}};
  for (auto [d, n] : {std::pair{3, 4}, std::pair{2, 6}}) {
    const HostMatrices m = gaussian_hermitian_matrices(d, n, 0.7, 3);
    const std::vector<double> pts = random_points(7, d, 1.0, 4);
    for (double w : {0.0, 0.3, 1.0})
      for (auto [kind, lambda] : penalties) {
        LossSettings s;
        s.w = w;
        s.penalty = kind;
        s.penalty_weight = lambda;
        const auto [loss, g] = loss_and_gradient<double, Space>(m, pts, s);
        // The team eigensolver gives the same gradient; float agrees to its precision.
        const auto [loss_team, g_team] = loss_and_gradient<double, Space>(m, pts, s, team);
        const auto [loss_float, g_float] = loss_and_gradient<float, Space>(m, pts, s);
        double gnorm = 0, team_diff = 0, float_diff = 0;
        for (std::size_t i = 0; i < g.values.size(); ++i) {
          gnorm = std::max(gnorm, std::abs(g.values[i]));
          team_diff = std::max(team_diff, std::abs(g.values[i] - g_team.values[i]));
          float_diff = std::max(float_diff, std::abs(g.values[i] - g_float.values[i]));
        }
        CHECK(std::abs(loss_team - loss) <= 1e-12 * std::abs(loss));
        CHECK(team_diff <= 1e-11 * gnorm);
        CHECK(std::abs(loss_float - loss) <= 1e-5 * std::max(1.0, std::abs(loss)));
        CHECK(float_diff <= 1e-4 * gnorm);
        for (int dir = 0; dir < 4; ++dir) {
          const HostMatrices e = random_direction(d, n, 100 + dir);
          const double h = 1e-5;
          const double fd = (loss_and_gradient<double, Space>(axpy(m, h, e), pts, s).first -
                             loss_and_gradient<double, Space>(axpy(m, -h, e), pts, s).first) /
                            (2 * h);
          const double an = pair(g, e);
          INFO("D = " << d << ", N = " << n << ", w = " << w << ", penalty " << to_string(kind) << ", direction " << dir
                      << ": analytic " << an << ", finite differences " << fd);
          CHECK(std::abs(an - fd) <= 1e-6 * std::max(1.0, std::abs(fd)));
        }
        // The gradient is Hermitian.
        for (int k = 0; k < d; ++k)
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) CHECK(std::abs(g(k, i, j) - std::conj(g(k, j, i))) <= 1e-14);
      }
  }
}

TEMPLATE_TEST_CASE("excited-state degeneracy (A = diag(0,1,1), x = (0.2,0,0)) gives a finite gradient", "[gradient]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  // A_1 = diag(0, 1, 1) makes E_1 = E_2 at x = (0.2, 0, 0) (excited-state degeneracy, where autograd
  // through eigh gives NaN); A_2 couples the ground state to the pair so that the resolvent matters.
  HostMatrices m{3, 3, std::vector<cplx>(27)};
  m(0, 1, 1) = 1;
  m(0, 2, 2) = 1;
  m(1, 0, 1) = m(1, 1, 0) = 0.1;
  const std::vector<double> x{0.2, 0.0, 0.0};
  for (double w : {0.0, 0.5}) {
    LossSettings s;
    s.w = w;
    const auto [loss, g] = loss_and_gradient<Real, Space>(m, x, s);
    CHECK(std::isfinite(loss));
    for (auto z : g.values) CHECK((std::isfinite(z.real()) && std::isfinite(z.imag())));
    const double tol = std::is_same_v<Real, float> ? 1e-3 : 1e-7;
    for (int dir = 0; dir < 3; ++dir) {
      const HostMatrices e = random_direction(3, 3, 50 + dir);
      const double h = 1e-5;
      const double fd = (loss_and_gradient<double, Space>(axpy(m, h, e), x, s).first -
                         loss_and_gradient<double, Space>(axpy(m, -h, e), x, s).first) /
                        (2 * h);
      INFO("w = " << w << ", direction " << dir << ": analytic " << pair(g, e) << ", finite differences " << fd);
      CHECK(std::abs(pair(g, e) - fd) <= tol * std::max(1.0, std::abs(fd)));
    }
  }
}

TEST_CASE("the fuzzy sphere c J_k, c = 1/(j + w), is a stationary point of the loss on the unit sphere", "[gradient]") {
  using Space = Kokkos::DefaultHostExecutionSpace;
  // Fibonacci lattice: nearly uniform points on the unit sphere.
  const int count = 4000;
  std::vector<double> pts(3 * count);
  const double golden = 3.141592653589793 * (3 - std::sqrt(5.0));
  for (int t = 0; t < count; ++t) {
    const double z = 1 - 2 * (t + 0.5) / count, r = std::sqrt(1 - z * z);
    pts[3 * t] = r * std::cos(golden * t);
    pts[3 * t + 1] = r * std::sin(golden * t);
    pts[3 * t + 2] = z;
  }
  for (int n : {2, 3, 4})
    for (double w : {0.0, 0.25}) {
      const double j = 0.5 * (n - 1);
      HostMatrices spin = spin_matrices(n);
      auto scaled = [&](double c) {
        HostMatrices m = spin;
        for (auto& v : m.values) v *= c;
        return m;
      };
      LossSettings s;
      s.w = w;
      const double c = 1 / (j + w);
      const auto [loss, g] = loss_and_gradient<double, Space>(scaled(c), pts, s);
      const auto [loss_off, g_off] = loss_and_gradient<double, Space>(scaled(1.2 * c), pts, s);
      double norm = 0, norm_off = 0;
      for (auto z : g.values) norm += std::norm(z);
      for (auto z : g_off.values) norm_off += std::norm(z);
      INFO("N = " << n << ", w = " << w << ": |grad| at c = " << std::sqrt(norm) << ", at 1.2 c "
                  << std::sqrt(norm_off));
      CHECK(std::sqrt(norm) <= 1e-3 * std::sqrt(norm_off));
      // Loss at the optimum: (1 - c j)^2 + w c^2 j.
      CHECK(std::abs(loss - ((1 - c * j) * (1 - c * j) + w * c * c * j)) <= 1e-9);
      CHECK(loss < loss_off);
    }
}

#include "qgml/train/evaluate.hpp"

TEMPLATE_TEST_CASE("evaluate: chunked loss, gradient and observables equal one whole batch", "[gradient][evaluate]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const HostMatrices m = gaussian_hermitian_matrices(3, 5, 0.5, 8);
  const std::vector<double> pts = random_points(23, 3, 1.0, 9);
  LossSettings s;
  s.w = 0.3;
  s.penalty = PenaltyKind::frobenius_squared;
  s.penalty_weight = 0.05;
  const auto [loss, g] = loss_and_gradient<Real, Space>(m, pts, s);
  auto config = to_configuration<Real>(m, exec);
  auto points = to_device_points<Real, Space>(pts, 23, 3);
  const auto e = evaluate(exec, config, points, s, 5);  // 5 chunks, the last one partial
  const double tol = std::is_same_v<Real, float> ? 1e-5 : 1e-12;
  CHECK(std::abs(e.loss - loss) <= tol * std::abs(loss));
  CHECK(std::abs(e.loss - (e.reconstruction + 0.3 * e.fluctuation + e.penalty)) <= tol * std::abs(loss));
  auto gh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.gradient);
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 5; ++j)
        CHECK(std::abs(cplx(gh(k, i, j).real(), gh(k, i, j).imag()) - g(k, i, j)) <= 10 * tol);
  auto sigma2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.sigma2);
  auto energy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.energy);
  auto xbar = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.xbar);
  double mean_sigma = 0;
  for (int t = 0; t < 23; ++t) {
    mean_sigma += sigma2(t) / 23;
    double d2 = 0;
    for (int k = 0; k < 3; ++k) d2 += std::pow(double(xbar(t, k)) - double(Real(pts[3 * t + k])), 2);
    CHECK(std::abs(2 * energy(t) - (d2 + sigma2(t))) <= 10 * tol);  // 2 E_0 = d^2 + sigma^2
  }
  CHECK(std::abs(mean_sigma - e.fluctuation) <= 10 * tol);
}

namespace {

// Loss sums, gradient, xbar, terms and info of one compute() (optionally a second one accumulated), on
// the separate kernels, the fused host path with the whole spectrum, the fused ground-state path, or
// the team path (in the given TeamShape; automatic: the backend's default); the fused path's reduction
// precision and pack width as given.
enum Path { separate, fused_spectrum, fused_ground_state, team };
struct EngineResult {
  std::vector<double> sums, gradient, xbar, terms;
  std::vector<int> info;
};

template <class Real, class Space>
EngineResult run_engine(
    const HostMatrices& m, const std::vector<double>& pts, const LossSettings& s, Path path, bool twice,
    const TeamShape& shape = {},
    typename LossGradient<Real, Space>::ReductionPrecision precision =
        LossGradient<Real, Space>::ReductionPrecision::automatic,
    typename LossGradient<Real, Space>::PackWidth pack = LossGradient<Real, Space>::PackWidth::automatic) {
  const bool fused = path == fused_spectrum || path == fused_ground_state;
  const Space exec;
  auto config = to_configuration<Real>(m, exec);
  const int count = int(pts.size()) / m.D;
  auto points = to_device_points<Real, Space>(pts, count, m.D);
  LossGradient<Real, Space> engine(m.D, m.N, count);
  CHECK(engine.ground_state_path() == (m.N >= LossGradient<Real, Space>::ground_state_min_n));  // automatic
  engine.set_kernel(fused ? LossKernel::automatic : (path == team ? LossKernel::team : LossKernel::separate));
  engine.set_team_shape(shape);
  engine.set_reduction_precision(precision);
  engine.set_pack_width(pack);
  using Engine = LossGradient<Real, Space>;
  engine.set_spectral_path(path == fused_ground_state ? Engine::SpectralPath::ground_state
                                                      : Engine::SpectralPath::full_spectrum);
  REQUIRE(engine.ground_state_path() == (path == fused_ground_state));
  REQUIRE(engine.fused() == (fused && m.N >= eigh_packed_min_n));
  REQUIRE((engine.kernel() == LossKernel::team) == (path == team));
  if (pack != Engine::PackWidth::automatic)
    REQUIRE(engine.wide_pack_path() ==
            (std::is_same_v<Real, double> && pack == Engine::PackWidth::wide && !engine.mixed_precision_path()));
  engine.compute(exec, config, points, s, Real(1) / count, false);
  if (twice) engine.compute(exec, config, points, s, Real(0.5) / count, true);
  EngineResult r;
  auto sums = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), engine.sums());
  for (int q = 0; q < int(loss_penalty); ++q) r.sums.push_back(sums(q));
  auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), engine.gradient());
  for (int k = 0; k < m.D; ++k)
    for (int i = 0; i < m.N; ++i)
      for (int j = 0; j < m.N; ++j) {
        r.gradient.push_back(g(k, i, j).real());
        r.gradient.push_back(g(k, i, j).imag());
      }
  auto xb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), engine.xbar());
  auto terms = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), engine.terms());
  auto info = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), engine.eigh_info());
  for (int t = 0; t < count; ++t) {
    for (int k = 0; k < m.D; ++k) r.xbar.push_back(xb(t, k));
    for (int q = 0; q < int(loss_penalty); ++q) r.terms.push_back(terms(t, q));
    r.info.push_back(info(t));
  }
  return r;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

// max |a - b| / max(1, max |a|), NaN-aware: a NaN on one side only counts as infinitely far.
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return INFINITY;
      continue;
    }
    diff = std::max(diff, std::abs(a[i] - b[i]));
  }
  return diff / std::max(1.0, max_abs(a));
}

// One engine's gradient, loss sums, x-bar and per-point terms against a reference's, to tol, and the
// same eigensolver codes.
void check_agrees(const EngineResult& r, const EngineResult& f, double tol) {
  CHECK(relative_difference(r.gradient, f.gradient) <= tol);
  CHECK(relative_difference(r.sums, f.sums) <= tol);
  CHECK(relative_difference(r.xbar, f.xbar) <= tol);
  CHECK(relative_difference(r.terms, f.terms) <= tol);
  CHECK(r.info == f.info);
}

}  // namespace

TEMPLATE_TEST_CASE("the fused host path gives the separate kernels' loss, gradient and per-point terms",
                   "[gradient][fused]", QGML_TEST_HOST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  constexpr int width = linalg::packed_eigh_width<Real>;
  const double tol = std::is_same_v<Real, float> ? 2e-4 : 1e-11;
  struct Case {
    int d, n, count;
  };
  // Partial packs, one point, several chunks, N = 1 (no fused path), odd sizes up to N = 64, N = 100
  // (beyond the packed eigensolver's automatic range, scratch out of L2), and a batch with more packs
  // than packed_gradient_max_chunks (several packs per chunk).
  const int many =
      width * (qgml::detail::packed_gradient_max_chunks<Real>(2, qgml::detail::packed_gradient_blocks(2, 0)) + 3) + 5;
  for (const Case c :
       {Case{3, 2, 1}, Case{2, 3, width + 3}, Case{3, 5, 300}, Case{3, 8, 4 * width}, Case{4, 13, 37},
        Case{3, 17, 2 * width - 1}, Case{1, 1, 9}, Case{2, 2, many}, Case{3, 64, width + 1}, Case{2, 100, width + 2}}) {
    CAPTURE(c.d, c.n, c.count);
    const HostMatrices m = gaussian_hermitian_matrices(c.d, c.n, 0.6, 11 + c.n);
    const std::vector<double> pts = random_points(c.count, c.d, 1.0, 12 + c.n);
    if (c.count == many)
      REQUIRE(qgml::detail::packed_gradient_chunk_packs<Real>(c.count, c.n,
                                                              qgml::detail::packed_gradient_blocks(c.d, 0)) > 1);
    for (double w : {0.0, 0.3}) {
      CAPTURE(w);
      LossSettings s;
      s.w = w;
      const auto r = run_engine<Real, Space>(m, pts, s, separate, false);
      using Engine = LossGradient<Real, Space>;
      for (Path path : {fused_spectrum, fused_ground_state})
        for (auto pack : {Engine::PackWidth::narrow, Engine::PackWidth::wide}) {
          CAPTURE(int(path), int(pack));
          const auto f =
              run_engine<Real, Space>(m, pts, s, path, false, {}, Engine::ReductionPrecision::automatic, pack);
          check_agrees(r, f, tol);
          CHECK(max_abs(f.gradient) > 0);
        }
    }
  }
  SECTION("accumulating a second batch") {
    const HostMatrices m = gaussian_hermitian_matrices(3, 6, 0.6, 21);
    const std::vector<double> pts = random_points(50, 3, 1.0, 22);
    const auto f = run_engine<Real, Space>(m, pts, LossSettings{0.0}, fused_ground_state, true);
    const auto r = run_engine<Real, Space>(m, pts, LossSettings{0.0}, separate, true);
    const auto once = run_engine<Real, Space>(m, pts, LossSettings{0.0}, fused_ground_state, false);
    CHECK(relative_difference(r.gradient, f.gradient) <= tol);
    CHECK(relative_difference(r.sums, f.sums) <= tol);
    for (std::size_t i = 0; i < f.gradient.size(); ++i)
      CHECK(std::abs(f.gradient[i] - 1.5 * once.gradient[i]) <= 10 * tol * std::max(1.0, max_abs(once.gradient)));
  }
  SECTION("degenerate ground states: regularised and skipped") {
    // A_1 = diag(0, 0, 1, 2) makes the ground state of x = 0 doubly degenerate; A_2 mixes only the
    // excited states, so the degeneracy is exact.
    HostMatrices m{2, 4, std::vector<cplx>(32)};
    m(0, 2, 2) = 1;
    m(0, 3, 3) = 2;
    m(1, 2, 3) = m(1, 3, 2) = 0.3;
    std::vector<double> pts = random_points(2 * width + 3, 2, 1.0, 23);
    pts[0] = pts[1] = 0;
    pts[2 * width] = pts[2 * width + 1] = 0;
    for (auto policy : {DegeneracyPolicy::regularize, DegeneracyPolicy::skip}) {
      LossSettings s;
      s.w = 0;
      s.degeneracy = policy;
      const auto r = run_engine<Real, Space>(m, pts, s, separate, false);
      const auto f = run_engine<Real, Space>(m, pts, s, fused_spectrum, false);
      const auto g = run_engine<Real, Space>(m, pts, s, fused_ground_state, false);
      CHECK(f.sums[loss_degenerate_points] == r.sums[loss_degenerate_points]);
      CHECK(g.sums[loss_degenerate_points] == r.sums[loss_degenerate_points]);
      CHECK(r.sums[loss_degenerate_points] >= 2);
      CHECK(relative_difference(r.gradient, f.gradient) <= tol);
      CHECK(relative_difference(r.sums, f.sums) <= tol);
      // At an exactly degenerate ground state psi_0 is any unit vector of the degenerate pair, and the
      // solvers pick different ones: the regularised gradient of those points differs, the skipped one not.
      if (policy == DegeneracyPolicy::skip) CHECK(relative_difference(r.gradient, g.gradient) <= tol);
      for (double v : g.gradient) CHECK(std::isfinite(v));
      CHECK(std::abs(g.sums[loss_energy] - r.sums[loss_energy]) <= tol * std::max(1.0, std::abs(r.sums[loss_energy])));
    }
  }
  SECTION("points far from the spectrum of the matrices (|x| ~ 30, E_0 ~ 450)") {
    // E_0 = |x|^2 / 2 + O(|x|) is large against the gaps: the inverse iteration's shift and the solve's
    // eta must follow the rounding of E_0, not only the spread of the spectrum.
    const HostMatrices m = gaussian_hermitian_matrices(3, 9, 0.6, 26);
    std::vector<double> pts = random_points(3 * width + 1, 3, 1.0, 27);
    for (double& v : pts) v *= 30;
    for (double w : {0.0, 0.3}) {
      LossSettings s;
      s.w = w;
      const auto r = run_engine<Real, Space>(m, pts, s, separate, false);
      const auto g = run_engine<Real, Space>(m, pts, s, fused_ground_state, false);
      CHECK(relative_difference(r.gradient, g.gradient) <= tol);
      CHECK(relative_difference(r.xbar, g.xbar) <= tol);
      CHECK(relative_difference(r.sums, g.sums) <= tol);
    }
  }
  SECTION("a point with a NaN coordinate") {
    const HostMatrices m = gaussian_hermitian_matrices(3, 4, 0.6, 24);
    std::vector<double> pts = random_points(width + 2, 3, 1.0, 25);
    pts[3 * 5 + 1] = std::nan("");
    const auto f = run_engine<Real, Space>(m, pts, LossSettings{0.0}, fused_ground_state, false);
    const auto r = run_engine<Real, Space>(m, pts, LossSettings{0.0}, separate, false);
    CHECK(f.info == r.info);
    CHECK(f.info[5] == linalg::eigh_non_finite_input);
    CHECK(f.sums[loss_nonfinite_points] == 1);
    CHECK(f.sums[loss_eigh_failures] == 1);
    CHECK(r.sums[loss_nonfinite_points] == 1);
    for (int k = 0; k < 3; ++k) CHECK(std::isnan(f.xbar[3 * 5 + k]));
    for (std::size_t t = 0; t < f.info.size(); ++t)
      if (t != 5)
        for (int k = 0; k < 3; ++k) CHECK(std::abs(f.xbar[3 * t + k] - r.xbar[3 * t + k]) <= tol);
  }
}

// Wide packs (16 doubles, two vectors per lane operation) run every lane's arithmetic as narrow packs
// do (8 doubles), so the per-point results are the same bits; the gradient sums their lanes in another
// grouping, equal to rounding. The chunks hold an even number of narrow packs with wide packs: N = 17
// (3 narrow packs per chunk otherwise) and a batch over packed_gradient_max_chunks check that layout.
TEMPLATE_TEST_CASE("wide packs give narrow packs' per-point terms bit for bit and their gradient to rounding",
                   "[gradient][fused][wide]", QGML_TEST_HOST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using Engine = LossGradient<Real, Space>;
  {
    Engine engine(3, 8, 4);
    CHECK(engine.wide_pack_path() == (std::is_same_v<Real, double> && Engine::wide_packs_by_default));
    CHECK(engine.pack_lanes() == (engine.wide_pack_path() ? 2 : 1) * linalg::packed_eigh_width<Real>);
    engine.set_pack_width(Engine::PackWidth::narrow);
    CHECK(!engine.wide_pack_path());
    CHECK(engine.pack_lanes() == linalg::packed_eigh_width<Real>);
    engine.set_pack_width(Engine::PackWidth::wide);
    CHECK(engine.wide_pack_path() == std::is_same_v<Real, double>);  // never in float
    Engine mixed(3, Engine::mixed_precision_min_n, 4);
    mixed.set_pack_width(Engine::PackWidth::wide);
    CHECK(mixed.mixed_precision_path() == std::is_same_v<Real, double>);
    CHECK(!mixed.wide_pack_path());  // the mixed precision pairs narrow packs itself
    Engine full(3, Engine::mixed_precision_min_n, 4);
    full.set_spectral_path(Engine::SpectralPath::full_spectrum);
    CHECK(!full.mixed_precision_path());  // it refines psi_0: the ground-state path only
    CHECK(full.wide_pack_path() == (std::is_same_v<Real, double> && Engine::wide_packs_by_default));
    // What qgml train reports before an engine exists: the choices of TrainingSettings at size n.
    TrainingSettings ts;
    const auto choice = [&](int n) { return qgml::detail::EnginePathSettings<Engine>(ts).path_choice(n); };
    CHECK(choice(Engine::mixed_precision_min_n).mixed_precision == std::is_same_v<Real, double>);
    CHECK(!choice(Engine::mixed_precision_min_n - 1).mixed_precision);
    CHECK(choice(8).wide_packs == (std::is_same_v<Real, double> && Engine::wide_packs_by_default));
    CHECK(!choice(Engine::mixed_precision_min_n).wide_packs);
    ts.ground_state_path = false;
    CHECK(!choice(Engine::mixed_precision_min_n).mixed_precision);
    CHECK(choice(Engine::mixed_precision_min_n).wide_packs == full.wide_pack_path());
    ts.ground_state_path = true;
    ts.mixed_precision_reduction = false;
    CHECK(!choice(Engine::mixed_precision_min_n).mixed_precision);
    ts.wide_packs = false;
    CHECK(!choice(8).wide_packs);
  }
  if constexpr (std::is_same_v<Real, double>) {
    constexpr int narrow = linalg::packed_eigh_width<Real>;
    struct Case {
      int d, n, count;
    };
    const int many =
        narrow * (qgml::detail::packed_gradient_max_chunks<Real>(2, qgml::detail::packed_gradient_blocks(2, 0)) + 3) +
        5;
    // Full spectrum (N = 3, 4), odd numbers of narrow packs, a partial last pack, one point, N = 17 (three
    // narrow packs per chunk when unpaired), several packs per chunk, N = 48.
    for (const Case c : {Case{2, 3, 3 * narrow + 1}, Case{3, 4, 40}, Case{3, 8, 5 * narrow}, Case{3, 8, 1},
                         Case{4, 13, 77}, Case{3, 17, 9 * narrow + 2}, Case{2, 2, many}, Case{3, 48, 21}}) {
      CAPTURE(c.d, c.n, c.count);
      const HostMatrices m = gaussian_hermitian_matrices(c.d, c.n, 0.6, 51 + c.n);
      std::vector<double> pts = random_points(c.count, c.d, 1.0, 52 + c.n);
      if (c.count == 77) pts[70 * c.d + 1] = std::numeric_limits<double>::quiet_NaN();
      const Path path = c.n >= Engine::ground_state_min_n ? fused_ground_state : fused_spectrum;
      for (double w : {0.0, 0.3}) {
        CAPTURE(w);
        LossSettings s;
        s.w = w;
        const auto a = run_engine<Real, Space>(m, pts, s, path, false, {}, Engine::ReductionPrecision::full,
                                               Engine::PackWidth::narrow);
        const auto b = run_engine<Real, Space>(m, pts, s, path, false, {}, Engine::ReductionPrecision::full,
                                               Engine::PackWidth::wide);
        CHECK(a.info == b.info);
        CHECK(relative_difference(a.xbar, b.xbar) == 0);
        CHECK(relative_difference(a.terms, b.terms) == 0);
        CHECK(relative_difference(a.gradient, b.gradient) <= 1e-13);
        CHECK(relative_difference(a.sums, b.sums) <= 1e-13);
        if (c.count != 77) CHECK(max_abs(b.gradient) > 0);
      }
    }
  }
}

// Passing a sweeps View does not change the path compute() takes (fused(eigh) alone decides): on host
// spaces the fused path runs (the separate kernels' buffers stay unallocated) and reports 0 sweeps per
// point (cold solves), with the same results as without the View.
TEMPLATE_TEST_CASE(
    "the fused ground-state path with its reduction in single precision gives the double "
    "reduction's loss, gradient and per-point terms",
    "[gradient][fused][mixed]", QGML_TEST_HOST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using Engine = LossGradient<Real, Space>;
  {
    LossGradient<Real, Space> engine(3, Engine::mixed_precision_min_n, 4);
    CHECK(engine.mixed_precision_path() == std::is_same_v<Real, double>);  // automatic from the threshold
    engine.set_reduction_precision(Engine::ReductionPrecision::full);
    CHECK(!engine.mixed_precision_path());
    LossGradient<Real, Space> small(3, Engine::mixed_precision_min_n - 1, 4);
    CHECK(!small.mixed_precision_path());
  }
  if constexpr (std::is_same_v<Real, double>) {
    struct Case {
      int d, n, count;
    };
    // Whole pairs of packs, a pair with a partial second half, one without a second half, several
    // chunks, a point with a NaN coordinate (its half takes the double path), N not a multiple of 8.
    for (const Case c : {Case{3, 32, 19}, Case{3, 40, 32}, Case{2, 64, 9}, Case{3, 33, 5}, Case{3, 32, 200}}) {
      CAPTURE(c.d, c.n, c.count);
      const HostMatrices m = gaussian_hermitian_matrices(c.d, c.n, 0.6, 41 + c.n);
      std::vector<double> pts = random_points(c.count, c.d, 1.0, 42 + c.n);
      if (c.count == 19) pts[17 * c.d] = std::numeric_limits<double>::quiet_NaN();
      for (double w : {0.0, 0.3}) {
        CAPTURE(w);
        LossSettings s;
        s.w = w;
        const auto full =
            run_engine<Real, Space>(m, pts, s, fused_ground_state, false, {}, Engine::ReductionPrecision::full);
        const auto mixed = run_engine<Real, Space>(m, pts, s, fused_ground_state, false, {},
                                                   Engine::ReductionPrecision::single_refined);
        CHECK(relative_difference(full.gradient, mixed.gradient) <= 1e-11);
        CHECK(relative_difference(full.sums, mixed.sums) <= 1e-11);
        CHECK(relative_difference(full.xbar, mixed.xbar) <= 1e-11);
        CHECK(relative_difference(full.terms, mixed.terms) <= 1e-11);
        CHECK(full.info == mixed.info);
        if (c.count != 19) CHECK(max_abs(mixed.gradient) > 0);  // the NaN point makes every entry NaN
      }
    }
  }
}

TEMPLATE_TEST_CASE("a sweeps View keeps the fused path and receives 0 sweeps per point", "[gradient][fused]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using Mem = typename TestType::memory_space;
  const Space exec;
  const int d = 3, n = 6, count = 21;
  const HostMatrices m = gaussian_hermitian_matrices(d, n, 0.6, 31);
  const std::vector<double> pts = random_points(count, d, 1.0, 32);
  auto config = to_configuration<Real>(m, exec);
  auto points = to_device_points<Real, Space>(pts, count, d);
  LossSettings s;
  s.w = 0.3;
  LossGradient<Real, Space> plain(d, n, count), with_sweeps(d, n, count);
  const bool fused = is_host_space_v<Space>;
  REQUIRE(with_sweeps.fused() == fused);
  IntVector<Mem> sweeps("qgml::test::sweeps", count + 1);
  Kokkos::deep_copy(sweeps, -1);
  plain.compute(exec, config, points, s, Real(1) / count, false);
  with_sweeps.compute(exec, config, points, s, Real(1) / count, false, EighOptions{}, sweeps);
  // only the separate kernels allocate the spectrum
  CHECK((with_sweeps.eigenvalues().extent(0) == 0) == (with_sweeps.kernel() != LossKernel::separate));
  auto sh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sweeps);
  for (int t = 0; t < count; ++t) CHECK(sh(t) == 0);
  CHECK(sh(count) == -1);  // nothing written past the batch
  auto g0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), plain.gradient());
  auto g1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), with_sweeps.gradient());
  int differ = 0;
  for (std::size_t i = 0; i < g0.span(); ++i) differ += g0.data()[i] == g1.data()[i] ? 0 : 1;
  CHECK(differ == 0);
  auto s0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), plain.sums());
  auto s1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), with_sweeps.sums());
  for (int q = 0; q < int(loss_sum_count); ++q) CHECK(s0(q) == s1(q));
}

namespace {

// Team shapes the team path is tested with on Space: the default; one point per team of two threads
// (collective loops with barriers) where the backend allows it; several points per team on vector lanes
// (odd points per team: on CUDA shared memory then starts 8 bytes off a 16-byte boundary).
template <class Space>
std::vector<TeamShape> team_shapes() {
  std::vector<TeamShape> shapes{TeamShape{}, TeamShape::with_lanes(4, 3), TeamShape::with_lanes(1, 2)};
  if constexpr (is_host_space_v<Space>) {
    if (Space().concurrency() >= 2) shapes.push_back(TeamShape::with_threads(2));
  } else {
    for (const TeamShape s : {TeamShape::with_threads(32), TeamShape::with_threads(0), TeamShape::with_lanes(8, 4),
                              TeamShape::with_lanes(32, 2)})
      shapes.push_back(s);
  }
  return shapes;
}

}  // namespace

// The team path (one team per point, the GPU kernel) against the fused host path (CPUs) and the
// separate kernels (every backend): the same loss, gradient and per-point terms to 1e-12 in double.
TEMPLATE_TEST_CASE("the team path gives the fused and separate paths' loss, gradient and per-point terms",
                   "[gradient][team]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const double tol = std::is_same_v<Real, float> ? 2e-4 : 1e-12;
  const Path reference = is_host_space_v<Space> ? fused_ground_state : separate;
  struct Case {
    int d, n, count;
  };
  for (const Case c : {Case{3, 2, 1}, Case{2, 3, 11}, Case{3, 5, 300}, Case{3, 8, 40}, Case{4, 13, 37}, Case{3, 17, 15},
                       Case{1, 1, 9}, Case{3, 64, 9}}) {
    CAPTURE(c.d, c.n, c.count);
    const HostMatrices m = gaussian_hermitian_matrices(c.d, c.n, 0.6, 11 + c.n);
    const std::vector<double> pts = random_points(c.count, c.d, 1.0, 12 + c.n);
    for (double w : {0.0, 0.3}) {
      CAPTURE(w);
      LossSettings s;
      s.w = w;
      const Path ref = c.n >= eigh_packed_min_n ? reference : separate;
      const auto r = run_engine<Real, Space>(m, pts, s, ref, false);
      for (const TeamShape& shape : team_shapes<Space>()) {
        CAPTURE(to_string(shape));
        const auto f = run_engine<Real, Space>(m, pts, s, team, false, shape);
        check_agrees(r, f, tol);
        CHECK(max_abs(f.gradient) > 0);
      }
    }
  }
  SECTION("bit-identical when repeated with the same team shape (fixed reduction order)") {
    const HostMatrices m = gaussian_hermitian_matrices(3, 9, 0.6, 41);
    const std::vector<double> pts = random_points(700, 3, 1.0, 42);
    for (const TeamShape& shape : team_shapes<Space>()) {
      CAPTURE(to_string(shape));
      const auto first = run_engine<Real, Space>(m, pts, LossSettings{0.0}, team, false, shape);
      const auto again = run_engine<Real, Space>(m, pts, LossSettings{0.0}, team, false, shape);
      CHECK(again.gradient == first.gradient);
      CHECK(again.sums == first.sums);
      CHECK(again.xbar == first.xbar);
    }
  }
  SECTION("accumulating a second batch") {
    const HostMatrices m = gaussian_hermitian_matrices(3, 6, 0.6, 21);
    const std::vector<double> pts = random_points(50, 3, 1.0, 22);
    const auto f = run_engine<Real, Space>(m, pts, LossSettings{0.0}, team, true);
    const auto r = run_engine<Real, Space>(m, pts, LossSettings{0.0}, separate, true);
    CHECK(relative_difference(r.gradient, f.gradient) <= tol);
    CHECK(relative_difference(r.sums, f.sums) <= tol);
  }
  SECTION("degenerate ground states: regularised and skipped") {
    HostMatrices m{2, 4, std::vector<cplx>(32)};
    m(0, 2, 2) = 1;
    m(0, 3, 3) = 2;
    m(1, 2, 3) = m(1, 3, 2) = 0.3;
    std::vector<double> pts = random_points(19, 2, 1.0, 23);
    pts[0] = pts[1] = 0;
    pts[16] = pts[17] = 0;
    for (auto policy : {DegeneracyPolicy::regularize, DegeneracyPolicy::skip}) {
      CAPTURE(int(policy));
      LossSettings s;
      s.w = 0;
      s.degeneracy = policy;
      const auto r = run_engine<Real, Space>(m, pts, s, separate, false);
      const auto g = run_engine<Real, Space>(m, pts, s, team, false);
      CHECK(g.sums[loss_degenerate_points] == r.sums[loss_degenerate_points]);
      CHECK(r.sums[loss_degenerate_points] >= 2);
      // psi_0 of an exactly degenerate ground state is any unit vector of the pair (see above).
      if (policy == DegeneracyPolicy::skip) CHECK(relative_difference(r.gradient, g.gradient) <= tol);
      for (double v : g.gradient) CHECK(std::isfinite(v));
      CHECK(std::abs(g.sums[loss_energy] - r.sums[loss_energy]) <= tol * std::max(1.0, std::abs(r.sums[loss_energy])));
      if constexpr (is_host_space_v<Space>) {
        const auto f = run_engine<Real, Space>(m, pts, s, fused_ground_state, false);
        CHECK(relative_difference(f.gradient, g.gradient) <= tol);  // the same inverse iteration
      }
    }
  }
  SECTION("points far from the spectrum of the matrices (|x| ~ 30, E_0 ~ 450)") {
    const HostMatrices m = gaussian_hermitian_matrices(3, 9, 0.6, 26);
    std::vector<double> pts = random_points(25, 3, 1.0, 27);
    for (double& v : pts) v *= 30;
    const auto r = run_engine<Real, Space>(m, pts, LossSettings{0.0}, separate, false);
    const auto g = run_engine<Real, Space>(m, pts, LossSettings{0.0}, team, false);
    CHECK(relative_difference(r.gradient, g.gradient) <= 10 * tol);
    CHECK(relative_difference(r.xbar, g.xbar) <= 10 * tol);
    CHECK(relative_difference(r.sums, g.sums) <= 10 * tol);
  }
  SECTION("a point with a NaN coordinate") {
    const HostMatrices m = gaussian_hermitian_matrices(3, 4, 0.6, 24);
    std::vector<double> pts = random_points(10, 3, 1.0, 25);
    pts[3 * 5 + 1] = std::nan("");
    const auto g = run_engine<Real, Space>(m, pts, LossSettings{0.0}, team, false);
    const auto r = run_engine<Real, Space>(m, pts, LossSettings{0.0}, separate, false);
    CHECK(g.info == r.info);
    CHECK(g.info[5] == linalg::eigh_non_finite_input);
    CHECK(g.sums[loss_nonfinite_points] == 1);
    CHECK(g.sums[loss_eigh_failures] == 1);
    for (int k = 0; k < 3; ++k) CHECK(std::isnan(g.xbar[3 * 5 + k]));
    for (std::size_t t = 0; t < g.info.size(); ++t)
      if (t != 5)
        for (int k = 0; k < 3; ++k) CHECK(std::abs(g.xbar[3 * t + k] - r.xbar[3 * t + k]) <= tol);
  }
}

// Eigenvalues of a tridiagonal T by bisection (the team path's E_0, E_1, E_max) against the
// Hermitian eigensolver on the same T, including a clustered and a graded spectrum.
TEST_CASE("tridiagonal_eigenvalue gives every eigenvalue of T to eps ||T||", "[gradient][team][linalg]") {
  for (int n : {1, 2, 5, 16, 40}) {
    for (int kind = 0; kind < 3; ++kind) {
      CAPTURE(n, kind);
      std::vector<double> d(n), e(n, 0.0);
      for (int i = 0; i < n; ++i) {
        d[i] = kind == 0 ? std::sin(1.3 * i) : (kind == 1 ? 1.0 + 1e-9 * i : std::pow(10.0, -i % 8));
        if (i + 1 < n) e[i] = kind == 1 ? 1e-10 : 0.3 * std::cos(0.7 * i);
      }
      Kokkos::View<Kokkos::complex<double>**, Kokkos::LayoutRight, Kokkos::HostSpace> a("qgml::test::T", n, n),
          v("qgml::test::V", n, n);
      Kokkos::View<double*, Kokkos::HostSpace> w("qgml::test::w", n);
      std::vector<double> scratch(linalg::eigh_scratch_reals(n));
      for (int i = 0; i < n; ++i) {
        a(i, i) = d[i];
        if (i + 1 < n) a(i, i + 1) = a(i + 1, i) = e[i];
      }
      REQUIRE(linalg::hermitian_eigh(linalg::SerialLoops{}, a, w, v, scratch.data()) == linalg::eigh_success);
      double norm = 0;
      for (int i = 0; i < n; ++i) norm = std::max(norm, std::abs(w(i)));
      for (int k = 0; k < n; ++k)
        CHECK(std::abs(linalg::tridiagonal_eigenvalue(n, d.data(), e.data(), k) - w(k)) <=
              8e-16 * std::max(norm, 1.0) * n);
    }
  }
  std::vector<double> d{1.0, std::nan(""), 2.0}, e{0.1, 0.1, 0};
  CHECK(std::isnan(linalg::tridiagonal_eigenvalue(3, d.data(), e.data(), 0)));
}

// The automatic kernel choices and the errors of impossible requests.
TEST_CASE("resolve_loss_kernel: fused on CPUs where it applies, team on request, separate for warm starts",
          "[gradient][team]") {
  using Host = Kokkos::DefaultHostExecutionSpace;
  CHECK(resolve_loss_kernel<Host>(LossKernel::automatic, 8) == LossKernel::fused_host);
  CHECK(resolve_loss_kernel<Host>(LossKernel::automatic, 1) == LossKernel::separate);
  CHECK(resolve_loss_kernel<Host>(LossKernel::automatic, 65) == LossKernel::fused_host);
  CHECK(resolve_loss_kernel<Host>(LossKernel::automatic, fused_host_max_n) == LossKernel::fused_host);
  CHECK(resolve_loss_kernel<Host>(LossKernel::automatic, fused_host_max_n + 1) == LossKernel::separate);
  CHECK(resolve_loss_kernel<Host>(LossKernel::fused_host, fused_host_max_n + 1) == LossKernel::separate);
  CHECK(resolve_loss_kernel<Host>(LossKernel::team, 8) == LossKernel::team);
  CHECK(resolve_loss_kernel<Host>(LossKernel::team, 8, EighVariant::automatic, true) == LossKernel::separate);
  CHECK(resolve_loss_kernel<Host>(LossKernel::automatic, 8, EighVariant::serial) == LossKernel::separate);
  CHECK(parse_loss_kernel("fused-host") == LossKernel::fused_host);
  CHECK(to_string(parse_loss_kernel("team")) == "team");
  CHECK_THROWS_AS(parse_loss_kernel("fused"), Error);
#if defined(KOKKOS_ENABLE_CUDA)
  CHECK(resolve_loss_kernel<Kokkos::Cuda>(LossKernel::automatic, 8) == LossKernel::team);
  CHECK_THROWS_AS(resolve_loss_kernel<Kokkos::Cuda>(LossKernel::fused_host, 8), Error);
#endif
}
