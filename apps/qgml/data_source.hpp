// The data a run trains on: a seeded generator or a CSV/NPY file, as configured (data.* settings).
#pragma once

#include <Kokkos_Core.hpp>

#include <string>

#include "qgml/data_io.hpp"
#include "qgml/datasets.hpp"
#include "qgml/manifolds.hpp"

#include "config.hpp"

namespace qgml::app {

template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> load_data(const ExecSpace& exec, const Config& c) {
  using View = RealMatrix<Real, typename ExecSpace::memory_space>;
  View x;
  const std::string file = c.text("data.file");
  if (!file.empty()) {
    x = to_device_points<Real>(exec, read_points(file));
  } else {
    const int t = int(c.integer("data.points"));
    const double noise = c.real("data.noise");
    const auto seed = std::uint64_t(c.integer("data.seed"));
    const std::string g = c.text("data.generator");
    if (g == "sphere")
      x = sphere_points<Real>(exec, t, int(c.integer("data.dimension")), noise, seed);
    else if (g == "circle")
      x = circle_points<Real>(exec, t, c.real("data.radius"), noise, seed);
    else if (g == "spiral")
      x = spiral_points<Real>(exec, t, noise, seed);
    else if (g == "line")
      x = line_points<Real>(exec, t, noise, seed);
    else if (g == "swiss_roll")
      x = swiss_roll_points<Real>(exec, t, noise, seed);
    else if (g == "hypercube")
      x = hypercube_points<Real>(exec, t, int(c.integer("data.intrinsic_dimension")), int(c.integer("data.dimension")),
                                 noise, seed);
    else if (g == "sphere10")
      x = benchmark_sphere10_points<Real>(exec, t, noise, seed);
    else if (g == "affine")
      x = affine_points<Real>(exec, t, noise, seed);
    else if (g == "helix")
      x = helix_points<Real>(exec, t, noise, seed);
    else if (g == "mobius")
      x = mobius_points<Real>(exec, t, noise, seed);
    else
      x = curve13_points<Real>(exec, t, noise, seed);
  }
  if (c.boolean("data.standardize")) {
    // x <- (x - mean) / std, with the mean per coordinate and one overall std (keeps the shape).
    const int count = int(x.extent(0)), d = int(x.extent(1));
    Kokkos::View<double*, typename ExecSpace::memory_space> mean("qgml::app::mean", d);
    Kokkos::parallel_for(
        "qgml::app::standardize_mean", Kokkos::RangePolicy<ExecSpace>(exec, 0, d), KOKKOS_LAMBDA(const int k) {
          double s = 0;
          for (int t = 0; t < count; ++t) s += x(t, k);
          mean(k) = s / count;
        });
    double var = 0;
    Kokkos::parallel_reduce(
        "qgml::app::standardize_variance", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
        KOKKOS_LAMBDA(const int t, double& v) {
          for (int k = 0; k < d; ++k) v += (x(t, k) - mean(k)) * (x(t, k) - mean(k));
        },
        var);
    const double scale = var > 0 ? 1.0 / std::sqrt(var / (double(count) * d)) : 1.0;
    Kokkos::parallel_for(
        "qgml::app::standardize", Kokkos::RangePolicy<ExecSpace>(exec, 0, count), KOKKOS_LAMBDA(const int t) {
          for (int k = 0; k < d; ++k) x(t, k) = Real((x(t, k) - mean(k)) * scale);
        });
    qgml::fence(exec, "qgml::app::standardize");
  }
  return x;
}

}  // namespace qgml::app
