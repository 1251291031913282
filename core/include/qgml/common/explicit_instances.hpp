// The (execution space, precision, points view) combinations whose kernels the library compiles once,
// as explicit template instances (docs/architecture.md "Explicit instances"). A header whose kernel
// entry point is instantiated there declares those instances `extern` with QGML_FOR_EACH_INSTANCE, and
// one source of the library per precision defines them; every other combination is instantiated where
// it is used, as any template.
#pragma once

#include <Kokkos_Core.hpp>

#include <utility>

#include "qgml/common/types.hpp"

namespace qgml::instances {

// The points a kernel reads: a batch in the space's memory (count x D), its leading rows (a chunk or
// the local part of a batch), and the caller's host array wrapped without ownership (the C interface
// and the bindings) and its rows.
template <class Real, class Space>
using Points = RealMatrix<Real, typename Space::memory_space>;
template <class Real, class Space>
using PointRows = decltype(Kokkos::subview(std::declval<const Points<Real, Space>&>(),
                                           std::declval<Kokkos::pair<int, int>>(), Kokkos::ALL));
template <class Real, class Space>
using HostArray = Kokkos::View<Real**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class Real, class Space>
using HostArrayRows = decltype(Kokkos::subview(std::declval<const HostArray<Real, Space>&>(),
                                               std::declval<Kokkos::pair<int, int>>(), Kokkos::ALL));

// One value per point in the space's memory (energies of the samplers' chains).
template <class Real, class Space>
using Values = RealVector<Real, typename Space::memory_space>;

// A batch's eigenproblems and their results, by their leading rows (the chunk being solved).
template <class Real, class Space>
using MatrixRows = decltype(Kokkos::subview(std::declval<const MatrixStack<Real, typename Space::memory_space>&>(),
                                            std::declval<Kokkos::pair<int, int>>(), Kokkos::ALL, Kokkos::ALL));
template <class Space>
using Ints = IntVector<typename Space::memory_space>;
template <class Space>
using IntRows = decltype(Kokkos::subview(std::declval<const Ints<Space>&>(), std::declval<Kokkos::pair<int, int>>()));

}  // namespace qgml::instances

// QGML_FOR_EACH_INSTANCE_SPACE(M, E, Real) expands M(E, Real, Space, H) for every execution space of the
// build: Serial, OpenMP and Cuda where enabled. H(...) keeps its arguments for a space whose kernels read
// host memory and drops them for a device space, so that the instances on the caller's host arrays exist
// only where a kernel can read them.
#define QGML_INSTANCE_HOST_MEMORY(...) __VA_ARGS__
#define QGML_INSTANCE_DEVICE_MEMORY(...)
#if defined(QGML_NO_EXPLICIT_INSTANCES)
#define QGML_FOR_EACH_INSTANCE_SPACE(M, E, Real)
#else
#if defined(KOKKOS_ENABLE_SERIAL)
#define QGML_INSTANCE_SERIAL(M, E, Real) M(E, Real, Kokkos::Serial, QGML_INSTANCE_HOST_MEMORY)
#else
#define QGML_INSTANCE_SERIAL(M, E, Real)
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
#define QGML_INSTANCE_OPENMP(M, E, Real) M(E, Real, Kokkos::OpenMP, QGML_INSTANCE_HOST_MEMORY)
#else
#define QGML_INSTANCE_OPENMP(M, E, Real)
#endif
#if defined(KOKKOS_ENABLE_CUDA)
#define QGML_INSTANCE_CUDA(M, E, Real) M(E, Real, Kokkos::Cuda, QGML_INSTANCE_DEVICE_MEMORY)
#else
#define QGML_INSTANCE_CUDA(M, E, Real)
#endif
#define QGML_FOR_EACH_INSTANCE_SPACE(M, E, Real) \
  QGML_INSTANCE_SERIAL(M, E, Real) QGML_INSTANCE_OPENMP(M, E, Real) QGML_INSTANCE_CUDA(M, E, Real)
#endif

// QGML_FOR_EACH_INSTANCE(M, E) expands M(E, Real, Space, H) for both precisions and every such space:
// E = extern declares the instances (in the kernel's header), E empty defines them (in the library's
// sources, which use QGML_FOR_EACH_INSTANCE_SPACE with one precision each).
#define QGML_FOR_EACH_INSTANCE(M, E)         \
  QGML_FOR_EACH_INSTANCE_SPACE(M, E, double) \
  QGML_FOR_EACH_INSTANCE_SPACE(M, E, float)
