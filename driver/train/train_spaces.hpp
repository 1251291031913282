// Where a training run runs and where data.placement keeps its points.
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/train/trainer.hpp"

namespace qgml::app {

using Exec = Kokkos::DefaultExecutionSpace;
// data.placement = host: pinned host memory on GPUs (each batch streamed by the gather kernel); on
// CPUs the execution space's own memory.
using HostDataSpace = host_readable_space_t<Exec>;

}  // namespace qgml::app
