// One algorithm, two parallel mappings. A batched routine is written once against this small interface
// and instantiated with SerialLoops (one thread owns the whole matrix) or TeamLoops (the threads of a
// team share it). Inside TeamLoops every thread calls every member function (collective semantics).
#pragma once

#include <Kokkos_Core.hpp>

namespace qgml::linalg {

struct SerialLoops {
  static constexpr bool is_serial = true;
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void for_each(int begin, int end, const F& f) const {
    for (int i = begin; i < end; ++i) f(i);
  }
  // sum_{i in [begin, end)} f(i), returned to every caller.
  template <class T, class F>
  KOKKOS_FORCEINLINE_FUNCTION T sum(int begin, int end, const F& f) const {
    T s = T(0);
    for (int i = begin; i < end; ++i) s += f(i);
    return s;
  }
  KOKKOS_FORCEINLINE_FUNCTION void barrier() const {}
  KOKKOS_FORCEINLINE_FUNCTION int team_size() const { return 1; }
  // Runs f on one thread; results it writes to shared memory are visible after the next barrier().
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void single(const F& f) const {
    f();
  }
};

template <class Member>
struct TeamLoops {
  static constexpr bool is_serial = false;
  const Member& member;

  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void for_each(int begin, int end, const F& f) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, begin, end), f);
  }
  template <class T, class F>
  KOKKOS_FORCEINLINE_FUNCTION T sum(int begin, int end, const F& f) const {
    T s = T(0);
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(member, begin, end), [&](const int i, T& acc) { acc += f(i); }, s);
    return s;
  }
  KOKKOS_FORCEINLINE_FUNCTION void barrier() const { member.team_barrier(); }
  KOKKOS_FORCEINLINE_FUNCTION int team_size() const { return member.team_size(); }
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void single(const F& f) const {
    Kokkos::single(Kokkos::PerTeam(member), f);
  }
};

}  // namespace qgml::linalg
