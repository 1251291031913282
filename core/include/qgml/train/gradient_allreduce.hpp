// The all-reduce of a data-parallel Trainer, once per batch: one buffer of doubles, the D N^2 complex
// gradient (real and imaginary parts interleaved) and then the loss sums, packed on the device, summed in
// place over the ranks, and unpacked.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/parallel/communicator.hpp"
#include "qgml/train/loss_settings.hpp"

namespace qgml {

namespace detail {

// Doubles in one all-reduce: the D N^2 complex gradient and the loss sums.
inline std::size_t allreduce_count(int d, int n) {
  return 2 * std::size_t(d) * std::size_t(n) * std::size_t(n) + std::size_t(loss_sum_count);
}

// buf = (Re g, Im g interleaved over the dnn entries, then the sums) as doubles (pack), or g and sums
// read back from buf (unpack).
template <class Gradient, class Sums, class Buffer>
struct PackGradient {
  using Real = typename Gradient::value_type::value_type;
  Gradient g;
  Sums sums;
  Buffer buf;
  int n = 0, dnn = 0;
  bool pack = false;
  KOKKOS_INLINE_FUNCTION void operator()(const int q) const {
    if (pack) {
      if (q < dnn) {
        const auto z = g(q / (n * n), (q / n) % n, q % n);
        buf(2 * q) = double(z.real());
        buf(2 * q + 1) = double(z.imag());
      } else {
        buf(2 * dnn + (q - dnn)) = sums(q - dnn);
      }
    } else {
      if (q < dnn)
        g(q / (n * n), (q / n) % n, q % n) = complex_t<Real>(Real(buf(2 * q)), Real(buf(2 * q + 1)));
      else
        sums(q - dnn) = buf(2 * dnn + (q - dnn));
    }
  }
};

// buffer <- (Re g, Im g interleaved, then the loss sums) as doubles (pack), or the reverse (unpack).
template <class ExecSpace, class Gradient, class Sums, class Buffer>
void pack_gradient(const ExecSpace& exec, const Gradient& g, const Sums& sums, const Buffer& buf, bool pack) {
  const int n = int(g.extent(1)), dnn = int(g.extent(0)) * n * n, nsums = int(sums.extent(0));
  Kokkos::parallel_for(pack ? "qgml::Trainer::pack_gradient" : "qgml::Trainer::unpack_gradient",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, dnn + nsums),
                       PackGradient<Gradient, Sums, Buffer>{g, sums, buf, n, dnn, pack});
}

}  // namespace detail

// The buffer of one all-reduce and its host mirror (for communicators that take host memory only),
// allocated once, and the seconds spent in the all-reduces.
template <class ExecSpace>
class GradientAllReduce {
 public:
  using memory_space = typename ExecSpace::memory_space;

  GradientAllReduce() = default;
  // For a D x N x N gradient.
  GradientAllReduce(int d, int n)
      : buffer_("qgml::Trainer::reduce_buffer", detail::allreduce_count(d, n)),
        buffer_host_(Kokkos::create_mirror(buffer_)) {}

  // gradient and loss sums <- their sums over comm's ranks (one in-place all-reduce of doubles).
  template <class Gradient, class Sums>
  void sum(const ExecSpace& exec, Communicator& comm, const Gradient& gradient, const Sums& sums) {
    ScopedRegion region("qgml::Trainer::allreduce");
    const auto& buf = buffer_;
    detail::pack_gradient(exec, gradient, sums, buf, true);
    qgml::fence(exec, "qgml::Trainer: gradient packed for the all-reduce");
    Kokkos::Timer timer;
    constexpr bool host_memory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
    if (host_memory || comm.accepts_device_memory()) {
      comm.allreduce_sum(buf.data(), buf.span(), !host_memory);
    } else {
      Kokkos::deep_copy(exec, buffer_host_, buf);
      qgml::fence(exec, "qgml::Trainer: gradient on the host for the all-reduce");
      comm.allreduce_sum(buffer_host_.data(), buffer_host_.span(), false);
      Kokkos::deep_copy(exec, buf, buffer_host_);
    }
    seconds_ += timer.seconds();
    detail::pack_gradient(exec, gradient, sums, buf, false);
  }

  // Seconds in sum() (host copies included) since construction.
  double seconds() const { return seconds_; }
  // Bytes one all-reduce moves per rank.
  std::size_t bytes() const { return buffer_.span() * sizeof(double); }

 private:
  Kokkos::View<double*, memory_space> buffer_;
  typename Kokkos::View<double*, memory_space>::HostMirror buffer_host_;
  double seconds_ = 0;
};

}  // namespace qgml
