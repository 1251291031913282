// The program's processes: MPI_COMM_WORLD when built with QGML_ENABLE_MPI, else one process.
#pragma once

#include "qgml/parallel/communicator.hpp"

namespace qgml::app {

// Initialises MPI (MPI builds) for the lifetime of the object; construct before Kokkos.
class ParallelEnvironment {
 public:
  ParallelEnvironment(int& argc, char**& argv);
  ~ParallelEnvironment();
  ParallelEnvironment(const ParallelEnvironment&) = delete;
  ParallelEnvironment& operator=(const ParallelEnvironment&) = delete;
};

// The communicator of all the program's processes (valid while a ParallelEnvironment exists).
Communicator& communicator();
// mpi.gpu_aware: whether device buffers go to MPI directly (ignored without MPI).
void use_gpu_aware_mpi(bool on);
// Whether the program was built with MPI.
bool built_with_mpi();

}  // namespace qgml::app
