// Builds the spin-1 fuzzy sphere, diagonalises H(x) at one point and prints the reconstruction
// xbar = <psi_0|A|psi_0>, which for A_k = J_k is x / |x| (docs/math.md 7).
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>

#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/model/hamiltonian.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/model/observables.hpp"

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  using Exec = Kokkos::DefaultExecutionSpace;
  using Mem = Exec::memory_space;
  const Exec exec;
  auto config = qgml::fuzzy_sphere_configuration<double>(3, 1.0, exec);
  Kokkos::View<double**, Kokkos::LayoutRight, Mem> x("downstream::x", 1, 3);
  auto xh = Kokkos::create_mirror_view(x);
  xh(0, 0) = 0.0;
  xh(0, 1) = 0.6;
  xh(0, 2) = 0.8;
  Kokkos::deep_copy(x, xh);
  qgml::MatrixStack<double, Mem> h("downstream::H", 1, 3, 3), v("downstream::V", 1, 3, 3);
  qgml::RealMatrix<double, Mem> w("downstream::w", 1, 3);
  qgml::IntVector<Mem> info("downstream::info", 1);
  qgml::GroundStateObservables<double, Mem> obs(1, 3);
  qgml::build_hamiltonians(exec, config, x, h);
  qgml::batched_eigh(exec, h, w, v, info);
  qgml::compute_ground_state_observables(exec, config, x, w, v, obs);
  auto xbar = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obs.xbar);
  std::printf("xbar = (%.6f, %.6f, %.6f)\n", xbar(0, 0), xbar(0, 1), xbar(0, 2));
  const double err = std::abs(xbar(0, 0)) + std::abs(xbar(0, 1) - 0.6) + std::abs(xbar(0, 2) - 0.8);
  return err < 1e-12 ? 0 : 1;
}
