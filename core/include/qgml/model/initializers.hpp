// Seeded initial matrix configurations (docs/math.md 8.3) and the fuzzy sphere (docs/math.md 7).
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/model/matrix_configuration.hpp"

namespace qgml {

// Host-side D x N x N complex array, row-major: element (k, i, j) at (k * N + i) * N + j.
struct HostMatrices {
  int D = 0;
  int N = 0;
  std::vector<std::complex<double>> values;

  std::complex<double>& operator()(int k, int i, int j) { return values[(std::size_t(k) * N + i) * N + j]; }
  const std::complex<double>& operator()(int k, int i, int j) const { return values[(std::size_t(k) * N + i) * N + j]; }
};

// QR recipe of the reference (docs/math.md 8.3), per k: Z with Re, Im ~ N(0, 1/2); Z = Q R; A_k = (Q + Q^H) / 2.
// Q is taken with a positive real diagonal of R (the Haar-distributed choice), so the eigenvalues of
// A_k are cos(theta_i) for the eigenphases theta_i of a Haar unitary.
HostMatrices qr_matrices(int D, int N, std::uint64_t seed);

// A_k = (Z + Z^H) / 2 with Re Z_ij, Im Z_ij ~ N(0, scale^2).
HostMatrices gaussian_hermitian_matrices(int D, int N, double scale, std::uint64_t seed);

// Spin-j matrices J_x, J_y, J_z with j = (N - 1) / 2 in the basis m = j, j - 1, ..., -j:
// [J_x, J_y] = i J_z (cyclic) and J_x^2 + J_y^2 + J_z^2 = j (j + 1) I.
HostMatrices spin_matrices(int N);

// A D x N x N stack of matrices in any memory space (a View of complex_t<Real>, LayoutRight) to the host,
// widened to double. Fences exec only.
template <class StackView, class ExecSpace>
HostMatrices stack_to_host(const StackView& stack, const ExecSpace& exec) {
  auto mirror = Kokkos::create_mirror_view(stack);
  Kokkos::deep_copy(exec, mirror, stack);
  qgml::fence(exec, "qgml::stack_to_host: wait for the device-to-host copy");
  HostMatrices h{int(stack.extent(0)), int(stack.extent(1)), {}};
  h.values.resize(std::size_t(h.D) * h.N * h.N);
  for (int k = 0; k < h.D; ++k)
    for (int i = 0; i < h.N; ++i)
      for (int j = 0; j < h.N; ++j) h(k, i, j) = {double(mirror(k, i, j).real()), double(mirror(k, i, j).imag())};
  return h;
}

// Host matrices, narrowed to the stack's Real, into `stack` (same D x N x N). Fences exec only; returns
// when the copy is done.
template <class StackView, class ExecSpace>
void host_to_stack(const HostMatrices& h, const StackView& stack, const ExecSpace& exec) {
  using complex_type = typename StackView::non_const_value_type;
  using real_type = typename complex_type::value_type;
  QGML_REQUIRE(int(stack.extent(0)) == h.D && int(stack.extent(1)) == h.N && int(stack.extent(2)) == h.N,
               "qgml::host_to_stack: the host matrices are " + std::to_string(h.D) + " x " + std::to_string(h.N) +
                   " x " + std::to_string(h.N) + ", the stack is " + std::to_string(stack.extent(0)) + " x " +
                   std::to_string(stack.extent(1)) + " x " + std::to_string(stack.extent(2)));
  auto mirror = Kokkos::create_mirror_view(stack);
  qgml::fence(exec,
              "qgml::host_to_stack: earlier work on the stack done before the host writes (the mirror may alias)");
  for (int k = 0; k < h.D; ++k)
    for (int i = 0; i < h.N; ++i)
      for (int j = 0; j < h.N; ++j) {
        const auto v = h(k, i, j);
        mirror(k, i, j) = complex_type(static_cast<real_type>(v.real()), static_cast<real_type>(v.imag()));
      }
  Kokkos::deep_copy(exec, stack, mirror);
  qgml::fence(exec, "qgml::host_to_stack: the host mirror must outlive the copy");
}

// Copies host matrices (converted to Real) into a new device configuration and computes S.
template <class Real, class ExecSpace>
MatrixConfiguration<Real, ExecSpace> to_configuration(const HostMatrices& h, const ExecSpace& exec) {
  MatrixConfiguration<Real, ExecSpace> config(h.D, h.N, exec);
  host_to_stack(h, config.matrices(), exec);
  config.update_square_sum(exec);
  qgml::fence(exec, "qgml::to_configuration: S computed");
  return config;
}

// Copies a device configuration to the host, widened to double.
template <class Real, class ExecSpace>
HostMatrices to_host(const MatrixConfiguration<Real, ExecSpace>& config, const ExecSpace& exec) {
  return stack_to_host(config.matrices(), exec);
}

template <class Real, class ExecSpace = Kokkos::DefaultExecutionSpace>
MatrixConfiguration<Real, ExecSpace> qr_configuration(int D, int N, std::uint64_t seed, const ExecSpace& exec) {
  return to_configuration<Real>(qr_matrices(D, N, seed), exec);
}

template <class Real, class ExecSpace = Kokkos::DefaultExecutionSpace>
MatrixConfiguration<Real, ExecSpace> gaussian_hermitian_configuration(int D, int N, double scale, std::uint64_t seed,
                                                                      const ExecSpace& exec) {
  return to_configuration<Real>(gaussian_hermitian_matrices(D, N, scale, seed), exec);
}

// The fuzzy sphere A_k = c J_k (D = 3, spin j = (N - 1) / 2); docs/math.md 7.
template <class Real, class ExecSpace = Kokkos::DefaultExecutionSpace>
MatrixConfiguration<Real, ExecSpace> fuzzy_sphere_configuration(int N, double c, const ExecSpace& exec) {
  HostMatrices h = spin_matrices(N);
  for (auto& v : h.values) v *= c;
  return to_configuration<Real>(h, exec);
}

}  // namespace qgml
