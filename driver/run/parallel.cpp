#include "run/parallel.hpp"

#include <Kokkos_Core.hpp>

#include <memory>

#ifdef QGML_WITH_MPI
#include "qgml/mpi/communicator.hpp"
#endif

namespace qgml::app {
namespace {

#ifdef QGML_WITH_MPI
std::unique_ptr<mpi::Environment> environment;
std::unique_ptr<mpi::Communicator> world;
#endif
SelfCommunicator self;

}  // namespace

ParallelEnvironment::ParallelEnvironment([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv) {
#ifdef QGML_WITH_MPI
  environment = std::make_unique<mpi::Environment>(argc, argv);
  constexpr bool device_is_host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible;
  world = std::make_unique<mpi::Communicator>(MPI_COMM_WORLD, mpi::DeviceBuffers::host_mirror, device_is_host);
#endif
}

ParallelEnvironment::~ParallelEnvironment() {
#ifdef QGML_WITH_MPI
  world.reset();
  environment.reset();
#endif
}

Communicator& communicator() {
#ifdef QGML_WITH_MPI
  if (world) return *world;
#endif
  return self;
}

void use_gpu_aware_mpi([[maybe_unused]] bool on) {
#ifdef QGML_WITH_MPI
  if (world) world->set_device_buffers(on ? mpi::DeviceBuffers::gpu_aware : mpi::DeviceBuffers::host_mirror);
#endif
}

bool built_with_mpi() {
#ifdef QGML_WITH_MPI
  return true;
#else
  return false;
#endif
}

}  // namespace qgml::app
