// Standardisation of a data set distributed over the ranks of a communicator:
//   x <- (x - mu) / s,   mu_k = (1/T) sum_t x_tk,   s^2 = (1/(T D)) sum_t sum_k (x_tk - mu_k)^2,
// with T the number of points over all ranks: one mean per coordinate and ONE overall standard
// deviation, so the shape of the data is unchanged (only shifted and scaled).
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/parallel/communicator.hpp"

namespace qgml {

// What standardize() applied: x' = (x - mean) / scale.
struct Standardization {
  std::vector<double> mean;  // mu, per coordinate
  double scale = 1;          // s; 1 when every point equals the mean (s = 0: the points are only shifted)
};

namespace detail {

// Kernels are named functors, not extended lambdas: docs/architecture.md "Host execution spaces in a CUDA build".
// mean(k) = sum_t x(t, k), the column sums of this rank's T_r x D points.
template <class PointsView, class MemorySpace>
struct PointColumnSums {
  PointsView x;
  Kokkos::View<double*, MemorySpace> mean;
  int count = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int k) const {
    double s = 0;
    for (int t = 0; t < count; ++t) s += x(t, k);
    mean(k) = s;
  }
};

// sum_t sum_k (x(t, k) - mean(k))^2 over this rank's points, in double.
template <class PointsView, class MemorySpace>
struct PointSquaredDeviations {
  using value_type = double;
  PointsView x;
  Kokkos::View<double*, MemorySpace> mean;
  int d = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int t, double& v) const {
    for (int k = 0; k < d; ++k) v += (x(t, k) - mean(k)) * (x(t, k) - mean(k));
  }
};

}  // namespace detail

// mu and s of the points of all ranks (points: this rank's T_r x D points, unchanged). A collective:
// every rank calls it with the same D (T_r may differ, also 0). The sums run in double whatever the
// point type; mu and s are the same on every rank. Fences exec.
template <class ExecSpace, class PointsView>
Standardization data_statistics(const ExecSpace& exec, const PointsView& points, Communicator& comm) {
  static_assert(PointsView::rank == 2, "qgml::data_statistics: points must be a T x D View");
  using memory_space = typename ExecSpace::memory_space;
  const auto x = points;
  const int count = int(x.extent(0)), d = int(x.extent(1));
  std::int64_t total = count;
  comm.allreduce_sum(&total, 1);
  Standardization result;
  result.mean.assign(std::size_t(d), 0.0);
  if (total == 0 || d == 0) return result;

  Kokkos::View<double*, memory_space> mean("qgml::data_statistics::mean", d);
  Kokkos::parallel_for("qgml::data_statistics::sum", Kokkos::RangePolicy<ExecSpace>(exec, 0, d),
                       detail::PointColumnSums<PointsView, memory_space>{x, mean, count});
  auto mean_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mean);
  comm.allreduce_sum(mean_host.data(), std::size_t(d), false);
  for (int k = 0; k < d; ++k) mean_host(k) /= double(total);
  Kokkos::deep_copy(exec, mean, mean_host);
  double var = 0;
  Kokkos::parallel_reduce("qgml::data_statistics::variance", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                          detail::PointSquaredDeviations<PointsView, memory_space>{x, mean, d}, var);
  comm.allreduce_sum(&var, 1, false);
  result.scale = var > 0 ? std::sqrt(var / (double(total) * d)) : 1.0;
  for (int k = 0; k < d; ++k) result.mean[std::size_t(k)] = mean_host(k);
  return result;
}

namespace detail {

// x(t, k) <- (x(t, k) - mean(k)) * inverse, inverse = 1 / s, computed in double and rounded to the point type.
template <class Real, class PointsView, class MemorySpace>
struct StandardizePoints {
  PointsView x;
  Kokkos::View<double*, MemorySpace> mean;
  int d = 0;
  double inverse = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int t) const {
    for (int k = 0; k < d; ++k) x(t, k) = Real((x(t, k) - mean(k)) * inverse);
  }
};

}  // namespace detail

// x <- (x - st.mean) / st.scale on this rank's points. Fences exec.
template <class ExecSpace, class PointsView>
void apply_standardization(const ExecSpace& exec, const PointsView& points, const Standardization& st) {
  using memory_space = typename ExecSpace::memory_space;
  using Real = typename PointsView::non_const_value_type;
  const auto x = points;
  const int count = int(x.extent(0)), d = int(x.extent(1));
  if (count == 0 || d == 0) return;
  Kokkos::View<double*, memory_space> mean("qgml::apply_standardization::mean", d);
  auto mean_host = Kokkos::create_mirror_view(mean);
  for (int k = 0; k < d; ++k) mean_host(k) = st.mean[std::size_t(k)];
  Kokkos::deep_copy(exec, mean, mean_host);
  const double inverse = 1.0 / st.scale;
  Kokkos::parallel_for("qgml::standardize::apply", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                       detail::StandardizePoints<Real, PointsView, memory_space>{x, mean, d, inverse});
  qgml::fence(exec, "qgml::apply_standardization");
}

// data_statistics, then apply_standardization: a collective; returns what was applied.
template <class ExecSpace, class PointsView>
Standardization standardize(const ExecSpace& exec, const PointsView& points, Communicator& comm) {
  const Standardization st = data_statistics(exec, points, comm);
  apply_standardization(exec, points, st);
  return st;
}

// The rule of data.standardize = auto (docs/dimension.md): the data are used as they are when they are
// already what standardize() makes of them up to a factor of 2, 1/2 <= s <= 2 and |mu| / sqrt(D) <= s
// (the mean's RMS coordinate within one spread), and standardised otherwise.
// The RMS coordinate of the mean, sqrt(|mu|^2 / D).
inline double mean_rms(const Standardization& st) {
  double mu2 = 0;
  for (double m : st.mean) mu2 += m * m;
  return st.mean.empty() ? 0.0 : std::sqrt(mu2 / double(st.mean.size()));
}

inline bool standardization_needed(const Standardization& st) {
  return !(st.scale >= 0.5 && st.scale <= 2.0 && mean_rms(st) <= st.scale);
}

}  // namespace qgml
