// The points of a training run in the memory data.placement names: this rank's shard, generated or read,
// copied from the host where that memory is not the execution space's.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

#include "qgml/common/types.hpp"
#include "qgml/data/standardize.hpp"
#include "qgml/parallel/communicator.hpp"

#include "data/data_source.hpp"
#include "settings/run_settings.hpp"
#include "train/train_spaces.hpp"

namespace qgml::app {

// This rank's points in DataSpace (generated or read on the host first when DataSpace is not the
// execution space's memory), and what data.standardize did.
template <class Real, class DataSpace>
struct PlacedData {
  RealMatrix<Real, DataSpace> points;
  std::int64_t total = 0;
  bool automatic = false, standardized = false;
  std::string reason, header_note;
  Standardization standardization;
};

template <class Real, class DataSpace>
PlacedData<Real, DataSpace> placed_data(const Exec& exec, const DataSection& data, Communicator& comm,
                                        const PointsInMemory* memory) {
  PlacedData<Real, DataSpace> placed;
  auto take = [&](const auto& shard) {
    placed.total = shard.total;
    placed.automatic = shard.automatic;
    placed.standardized = shard.standardized;
    placed.reason = shard.reason;
    placed.header_note = shard.header_note;
    placed.standardization = shard.standardization;
  };
  if constexpr (std::is_same_v<DataSpace, Exec::memory_space>) {
    const auto shard = load_data_shard<Real>(exec, data, comm, memory);
    take(shard);
    placed.points = shard.points;
  } else {
    const auto shard = load_data_shard<Real>(Kokkos::DefaultHostExecutionSpace(), data, comm, memory);
    take(shard);
    placed.points = RealMatrix<Real, DataSpace>(Kokkos::ViewAllocateWithoutInitializing("qgml::app::points"),
                                                shard.points.extent(0), shard.points.extent(1));
    Kokkos::deep_copy(placed.points, shard.points);
  }
  return placed;
}

}  // namespace qgml::app
