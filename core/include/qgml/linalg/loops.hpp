// One algorithm, three parallel mappings. A batched routine is written once against this small interface
// and instantiated with SerialLoops (one thread owns the whole matrix), TeamLoops (the threads of a team
// share it) or VectorLoops (the vector lanes of one thread of a team share it, so that a team holds
// several matrices: on CUDA a fraction of a warp per matrix). Inside TeamLoops and VectorLoops every
// thread, or lane, of the group calls every member function (collective semantics).
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

// The lanes of one thread of a team (TeamPolicy's vector length) share one problem; the team's other
// threads work on other problems and are never waited for. On CUDA the lanes are `lanes` neighbouring
// threads of one warp: barrier() is a __syncwarp over their mask, sums are Kokkos' shuffle reductions (a
// fixed tree over the lanes' strided partial sums, the result broadcast to every lane). On host spaces
// one thread runs every lane's iterations in order. team_size() is the requested vector length on every
// backend, so that algorithms that branch on it take the same branch on CPUs as on GPUs.
template <class Member>
struct VectorLoops {
  static constexpr bool is_serial = false;
  const Member& member;
  int lanes;

  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void for_each(int begin, int end, const F& f) const {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, begin, end), f);
  }
  template <class T, class F>
  KOKKOS_FORCEINLINE_FUNCTION T sum(int begin, int end, const F& f) const {
    T s = T(0);
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(member, begin, end), [&](const int i, T& acc) { acc += f(i); }, s);
    return s;
  }
  KOKKOS_FORCEINLINE_FUNCTION void barrier() const {
#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDA_ARCH__)
    // The lanes of team thread threadIdx.y: blockDim.x (a power of two <= 32) neighbours in its warp.
    __syncwarp(blockDim.x == 32 ? 0xffffffffu
                                : ((1u << blockDim.x) - 1u) << ((threadIdx.y % (32 / blockDim.x)) * blockDim.x));
#endif
  }
  KOKKOS_FORCEINLINE_FUNCTION int team_size() const { return lanes; }
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void single(const F& f) const {
    Kokkos::single(Kokkos::PerThread(member), f);
  }
};

}  // namespace qgml::linalg
