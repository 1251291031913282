// LossGradient's mean loss (plus penalty) and gradient of a host point list, copied back to the host in
// double: the library side of the gradient tests (test_loss_gradient.cpp, test_supervised_gradient.cpp).
#pragma once

#include <utility>
#include <vector>

#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/train/loss_gradient.hpp"

#include "test_support.hpp"

namespace qgml::test {

// Mean loss (plus penalty) and gradient of the points, on the host in double.
template <class Real, class Space>
std::pair<double, HostMatrices> loss_and_gradient(const HostMatrices& m, const std::vector<double>& pts,
                                                  const LossSettings& s, const EighOptions& eigh = {}) {
  const Space exec;
  auto config = to_configuration<Real>(m, exec);
  const int count = int(pts.size()) / m.D;
  auto points = to_device_points<Real, Space>(pts, count, m.D);
  LossGradient<Real, Space> engine(m.D, m.N, count);
  engine.compute(exec, config, points, s, Real(1) / count, false, eigh);
  engine.add_penalty(exec, config, s);
  auto sums = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), engine.sums());
  auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), engine.gradient());
  HostMatrices gh{m.D, m.N, std::vector<cplx>(m.values.size())};
  for (int k = 0; k < m.D; ++k)
    for (int i = 0; i < m.N; ++i)
      for (int j = 0; j < m.N; ++j) gh(k, i, j) = cplx(g(k, i, j).real(), g(k, i, j).imag());
  return {sums(loss_total) / count + sums(loss_penalty), gh};
}

}  // namespace qgml::test
