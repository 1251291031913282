// Compatibility layer between Kokkos 3.4.01 (our pinned build) and Kokkos 4.x (users' clusters).
#pragma once

#include <Kokkos_Core.hpp>

#include <string>

namespace qgml {

// Math functions live in Kokkos::Experimental in 3.x and in Kokkos:: in 4.x.
namespace math {
#if KOKKOS_VERSION >= 40000
using Kokkos::abs;
using Kokkos::acos;
using Kokkos::cos;
using Kokkos::exp;
using Kokkos::fabs;
using Kokkos::hypot;
using Kokkos::isfinite;
using Kokkos::log;
using Kokkos::sin;
using Kokkos::sqrt;
#else
using Kokkos::abs;
using Kokkos::Experimental::acos;
using Kokkos::Experimental::cos;
using Kokkos::Experimental::exp;
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::hypot;
using Kokkos::Experimental::isfinite;
using Kokkos::Experimental::log;
using Kokkos::Experimental::sin;
using Kokkos::Experimental::sqrt;
#endif
}  // namespace math

// Fences one execution-space instance; the label (Kokkos >= 3.5) shows up in profiling tools.
template <class ExecSpace>
void fence(const ExecSpace& exec, [[maybe_unused]] const std::string& label) {
#if KOKKOS_VERSION >= 30500
  exec.fence(label);
#else
  exec.fence();
#endif
}

// A profiling region that pops itself (Kokkos::Profiling::ScopedRegion exists only in 4.x).
class ScopedRegion {
 public:
  explicit ScopedRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ScopedRegion() { Kokkos::Profiling::popRegion(); }
  ScopedRegion(const ScopedRegion&) = delete;
  ScopedRegion& operator=(const ScopedRegion&) = delete;
};

}  // namespace qgml
