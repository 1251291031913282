// Standardisation of a data set distributed over the ranks of a communicator:
//   x <- (x - mu) / s,   mu_k = (1/T) sum_t x_tk,   s^2 = (1/(T D)) sum_t sum_k (x_tk - mu_k)^2,
// with T the number of points over all ranks: one mean per coordinate and ONE overall standard
// deviation, so the shape of the data is unchanged (only shifted and scaled).
// The sums run on the points divided by a power of two at least their largest magnitude (exact, so the
// statistics are those of the unscaled sums wherever these neither overflow nor underflow): data of any
// magnitude a double holds, 1e-300 or 1e300, give their mean and spread.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/parallel/communicator.hpp"

namespace qgml {

// What standardize() applied: x' = (x - mean) / scale.
struct Standardization {
  std::vector<double> mean;  // mu, per coordinate
  double scale = 1;          // s > 0 (data_statistics refuses points that are all identical)
};

// Spreads at most this fraction of the largest |mean| coordinate are rounding, not data: the points are
// identical.
constexpr double identical_points_spread = 1e-12;

namespace detail {

// Kernels are named functors, not extended lambdas: docs/architecture.md "Host execution spaces in a CUDA build".
// max_k |x(t, k)| over this rank's points, +inf for a non-finite value (x - x is 0 only when x is finite).
template <class PointsView>
struct PointMaxMagnitude {
  PointsView x;
  int d = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int t, double& v) const {
    for (int k = 0; k < d; ++k) {
      const double a = double(x(t, k));
      const double m = (a - a) == 0 ? (a < 0 ? -a : a) : HUGE_VAL;
      if (m > v) v = m;
    }
  }
};

// mean(k) = sum_t x(t, k) * down, the column sums of this rank's T_r x D points divided by 2^e
// (down = 2^-e as two factors, each a normal double, so that the products are exact).
template <class PointsView, class MemorySpace>
struct PointColumnSums {
  PointsView x;
  Kokkos::View<double*, MemorySpace> mean;
  int count = 0;
  double down1 = 1, down2 = 1;

  KOKKOS_INLINE_FUNCTION void operator()(const int k) const {
    double s = 0;
    for (int t = 0; t < count; ++t) s += double(x(t, k)) * down1 * down2;
    mean(k) = s;
  }
};

// sum_t sum_k (x(t, k) * down - mean(k))^2 over this rank's points, in double (mean: of the scaled points).
template <class PointsView, class MemorySpace>
struct PointSquaredDeviations {
  using value_type = double;
  PointsView x;
  Kokkos::View<double*, MemorySpace> mean;
  int d = 0;
  double down1 = 1, down2 = 1;

  KOKKOS_INLINE_FUNCTION void operator()(const int t, double& v) const {
    for (int k = 0; k < d; ++k) {
      const double y = double(x(t, k)) * down1 * down2 - mean(k);
      v += y * y;
    }
  }
};

}  // namespace detail

// mu and s of the points of all ranks (points: this rank's T_r x D points, unchanged). A collective:
// every rank calls it with the same D (T_r may differ, also 0). The sums run in double whatever the
// point type; mu and s are the same on every rank. Throws qgml::Error on every rank alike when a point
// is not finite, or when the points are all identical (spread 0, or at most identical_points_spread of
// the largest |mean| coordinate: rounding). Fences exec.
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

  // e: the binary exponent of the largest |x| over all ranks (2^e >= max |x|); a flag above any exponent
  // for a non-finite value, one below any for all zeros.
  constexpr std::int64_t not_finite = 1 << 20, all_zero = -(1 << 20);
  double largest = 0;
  Kokkos::parallel_reduce("qgml::data_statistics::magnitude", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                          detail::PointMaxMagnitude<PointsView>{x, d}, Kokkos::Max<double>(largest));
  std::int64_t e = all_zero;
  if (!(largest < HUGE_VAL))
    e = not_finite;
  else if (largest > 0) {
    int exponent = 0;
    std::frexp(largest, &exponent);
    e = exponent;
  }
  comm.allreduce_max(&e, 1);
  if (e == not_finite) throw Error("standardisation: the data hold a value that is not finite (NaN or infinite)");
  if (e == all_zero) throw Error("standardisation: every point is 0 (all points are identical): nothing to learn");
  const int shift = int(e);
  const double down1 = std::ldexp(1.0, -shift / 2), down2 = std::ldexp(1.0, -(shift - shift / 2));

  Kokkos::View<double*, memory_space> mean("qgml::data_statistics::mean", d);
  Kokkos::parallel_for("qgml::data_statistics::sum", Kokkos::RangePolicy<ExecSpace>(exec, 0, d),
                       detail::PointColumnSums<PointsView, memory_space>{x, mean, count, down1, down2});
  auto mean_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mean);
  comm.allreduce_sum(mean_host.data(), std::size_t(d), false);
  double largest_mean = 0;
  for (int k = 0; k < d; ++k) {
    mean_host(k) /= double(total);
    largest_mean = std::max(largest_mean, std::abs(mean_host(k)));
  }
  Kokkos::deep_copy(exec, mean, mean_host);
  double var = 0;
  Kokkos::parallel_reduce("qgml::data_statistics::variance", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                          detail::PointSquaredDeviations<PointsView, memory_space>{x, mean, d, down1, down2}, var);
  comm.allreduce_sum(&var, 1, false);
  const double spread = std::sqrt(var / (double(total) * d));  // of the scaled points, at most 2
  if (!(spread > identical_points_spread * largest_mean))
    throw Error("standardisation: all points are identical (spread " + std::to_string(spread) +
                " of the largest coordinate's magnitude): there is no shape to learn");
  result.scale = std::ldexp(spread, shift);
  for (int k = 0; k < d; ++k) result.mean[std::size_t(k)] = std::ldexp(mean_host(k), shift);
  if (!std::isfinite(result.scale) || result.scale == 0)
    throw Error("standardisation: the spread of the points is beyond the range of a double");
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

// x(t, k) <- x(t, k) / scale - mean_over_scale(k): no intermediate beyond the range of the result.
template <class Real, class PointsView, class MemorySpace>
struct StandardizePointsScaled {
  PointsView x;
  Kokkos::View<double*, MemorySpace> mean_over_scale;
  int d = 0;
  double scale = 1;

  KOKKOS_INLINE_FUNCTION void operator()(const int t) const {
    for (int k = 0; k < d; ++k) x(t, k) = Real(double(x(t, k)) / scale - mean_over_scale(k));
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
  // For spreads whose inverse overflows or means near the largest double, x / s - mu / s in place of
  // (x - mu) / s; the usual form otherwise, so that ordinary data keep their bits.
  const double inverse = 1.0 / st.scale;
  double largest_mean = 0;
  for (double m : st.mean) largest_mean = std::max(largest_mean, std::abs(m));
  if (!std::isfinite(inverse) || largest_mean > 1e300 || st.scale > 1e300) {
    for (int k = 0; k < d; ++k) mean_host(k) = st.mean[std::size_t(k)] / st.scale;
    Kokkos::deep_copy(exec, mean, mean_host);
    Kokkos::parallel_for("qgml::standardize::apply_scaled", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                         detail::StandardizePointsScaled<Real, PointsView, memory_space>{x, mean, d, st.scale});
    qgml::fence(exec, "qgml::apply_standardization");
    return;
  }
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
