// The qgml program. Subcommands:
//   qgml info                      Kokkos version, enabled backends, execution space, threads, precision
//   qgml fuzzy-sphere [N] [T]      evaluates the fuzzy sphere A_k = J_k / j on T points of the unit sphere
//                                  and compares the ground-state observables with their closed forms
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "qgml/batched_eigh.hpp"
#include "qgml/hamiltonian.hpp"
#include "qgml/initializers.hpp"
#include "qgml/observables.hpp"
#include "qgml/random.hpp"
#include "qgml/version.hpp"

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Real = double;

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s info\n"
               "       %s fuzzy-sphere [N (default 3)] [T (default 2500)]\n",
               argv0, argv0);
  return 2;
}

int parse_int(const char* text, const char* what, int lo, int hi) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi) {
    std::fprintf(stderr, "qgml: %s must be an integer in [%d, %d], got '%s'\n", what, lo, hi, text);
    std::exit(2);
  }
  return static_cast<int>(v);
}

int info() {
  std::printf("qgml %s\n", QGML_VERSION_STRING);
  std::printf("Kokkos %d.%d.%d\n", KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100);
  std::printf("execution space: %s (concurrency %d)\n", Exec::name(), int(Exec().concurrency()));
  std::printf("enabled backends:");
#ifdef KOKKOS_ENABLE_SERIAL
  std::printf(" Serial");
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  std::printf(" OpenMP");
#endif
#ifdef KOKKOS_ENABLE_CUDA
  std::printf(" Cuda");
#endif
  std::printf("\nprecision: double (default), float selectable\n");
  std::printf("host eigensolver backend: %s\n",
              QGML_HAVE_LAPACKE ? "qgml (default) and LAPACKE zheevd/cheevd" : "qgml");
  return 0;
}

// Evaluates the fuzzy sphere at T random points of the unit sphere (spec 1.8) and prints how far the
// computed observables are from their closed forms.
int fuzzy_sphere(int n, int count) {
  const Exec exec;
  const double j = 0.5 * (n - 1);
  const double c = 1.0 / j;
  auto config = qgml::fuzzy_sphere_configuration<Real>(n, c, exec);
  Kokkos::View<Real**, Kokkos::LayoutRight, Mem> points("qgml::app::points", count, 3);
  auto hp = Kokkos::create_mirror_view(points);
  const qgml::CounterRng rng(2024, 0);
  for (int t = 0; t < count; ++t) {
    double g[3], norm = 0;
    for (int k = 0; k < 3; ++k) {
      g[k] = rng.normal(3 * std::uint64_t(t) + k);
      norm += g[k] * g[k];
    }
    for (int k = 0; k < 3; ++k) hp(t, k) = g[k] / std::sqrt(norm);
  }
  Kokkos::deep_copy(exec, points, hp);
  qgml::MatrixStack<Real, Mem> h("qgml::app::H", count, n, n), v("qgml::app::V", count, n, n);
  qgml::RealMatrix<Real, Mem> w("qgml::app::w", count, n);
  qgml::IntVector<Mem> info("qgml::app::info", count);
  qgml::GroundStateObservables<Real, Mem> obs(count, 3);
  Kokkos::Timer timer;
  qgml::build_hamiltonians(exec, config, points, h);
  qgml::batched_eigh(exec, h, w, v, info);
  qgml::compute_ground_state_observables(exec, config, points, w, v, obs);
  qgml::fence(exec, "qgml::app::fuzzy_sphere");
  const double seconds = timer.seconds();
  const int failures = qgml::count_eigh_failures(exec, info);
  auto xbar = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obs.xbar);
  auto sigma2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obs.sigma2);
  auto wh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
  double err_xbar = 0, err_sigma = 0, err_gap = 0;
  for (int t = 0; t < count; ++t) {
    double r = 0;
    for (int k = 0; k < 3; ++k) r += xbar(t, k) * xbar(t, k);
    err_xbar = std::max(err_xbar, std::abs(std::sqrt(r) - c * j));
    err_sigma = std::max(err_sigma, std::abs(sigma2(t) - c * c * j));
    for (int m = 0; m + 1 < n; ++m) err_gap = std::max(err_gap, std::abs(wh(t, m + 1) - wh(t, m) - c));
  }
  std::printf("fuzzy sphere N = %d (spin j = %g, c = 1/j), %d points on the unit sphere, %s\n", n, j, count,
              Exec::name());
  std::printf("  H, eigendecomposition and observables: %.3f ms (%d solver failures)\n", 1e3 * seconds, failures);
  std::printf("  |xbar|  = c j     = %.6f   max deviation %.2e\n", c * j, err_xbar);
  std::printf("  sigma^2 = c^2 j   = %.6f   max deviation %.2e\n", c * c * j, err_sigma);
  std::printf("  gaps    = c |x|   = %.6f   max deviation %.2e\n", c, err_gap);
  const bool ok = failures == 0 && err_xbar < 1e-10 && err_sigma < 1e-10 && err_gap < 1e-10;
  std::printf("  %s\n", ok ? "closed forms reproduced" : "MISMATCH with the closed forms");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char* argv[]) {
  if (argc < 2) return usage(argv[0]);
  const std::string command = argv[1];
  if (command == "-h" || command == "--help") {
    usage(argv[0]);
    return 0;
  }
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    if (command == "info") return info();
    if (command == "fuzzy-sphere") {
      const int n = argc > 2 ? parse_int(argv[2], "N", 2, qgml::eigh_max_size) : 3;
      const int count = argc > 3 ? parse_int(argv[3], "T", 1, 100000000) : 2500;
      return fuzzy_sphere(n, count);
    }
    std::fprintf(stderr, "qgml: unknown command '%s'\n", command.c_str());
    return usage(argv[0]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "qgml: error: %s\n", e.what());
    return 1;
  }
}
