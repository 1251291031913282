// The inputs of a supervised training run (task regression or classification): the data of
// supervised_data.hpp, this rank's shard of the training points, the validation points and the initial
// configuration.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/model/default_matrix_size.hpp"
#include "qgml/parallel/communicator.hpp"

#include "common/format.hpp"
#include "data/data_source.hpp"
#include "data/supervised_data.hpp"
#include "settings/run_setup.hpp"
#include "train/kernel_notes.hpp"
#include "train/run_inputs.hpp"
#include "train/train_memory_check.hpp"
#include "train/train_spaces.hpp"

namespace qgml::app {

// prepare_inputs for a supervised task (supervised_data.hpp): every rank reads all points, keeps its
// shard of the training points.
template <class Real, class DataSpace>
RunInputs<Real, DataSpace> prepare_supervised_inputs(const Exec& exec, RunSettings& s, Communicator& comm,
                                                     const PointsInMemory* memory) {
  RunInputs<Real, DataSpace> in;
  in.supervised = true;
  run_collectively(comm, [&] {
    SupervisedData data = load_supervised_data(s, memory);
    if (data.train.rows < comm.size())
      throw Error(format("%d training points are too few for %d ranks (every rank needs at least one point)",
                         data.train.rows, comm.size()));
    const bool automatic_n = !s.model.n && s.model.load.empty();
    const int operators = data.d + data.transform.outputs();
    const ModelShape shape = resolve_model_shape(s, s.model.load.empty() ? data.d : operators);
    in.d = data.d;
    in.n = shape.n;
    in.total_points = data.train.rows;
    const ShardRange r = shard_range(data.train.rows, comm.size(), comm.rank());
    check_run_memory<Real, DataSpace>(exec, s, comm, data.train.rows, r.size(), operators, shape.n, false);
    HostData mine = detail::select_rows(data.train, [&] {
      std::vector<int> rows;
      for (std::int64_t t = r.begin; t < r.end; ++t) rows.push_back(int(t));
      return rows;
    }());
    const auto device = to_device_points<Real>(exec, mine);
    if constexpr (std::is_same_v<DataSpace, Exec::memory_space>) {
      in.data = device;
    } else {
      in.data = RealMatrix<Real, DataSpace>(Kokkos::ViewAllocateWithoutInitializing("qgml::app::points"),
                                            device.extent(0), device.extent(1));
      Kokkos::deep_copy(in.data, device);
    }
    if (data.validation.rows > 0) in.validation = to_device_points<Real>(exec, data.validation);
    if (!s.data.standardize) {
      s.data.standardize = true;
      s.choose("data.standardize", "true", "automatic: supervised tasks z-score each feature");
    }
    std::string patience_note;
    if (!s.training.patience) {
      const bool validation = data.validation.rows > 0;
      const std::string why = validation ? "stop 20 epochs after the lowest mean validation loss and keep that "
                                           "epoch's operators"
                                         : "no validation points";
      s.training.patience = validation ? 20 : 0;
      s.choose("training.patience", validation ? "20" : "0", "automatic: " + why);
      patience_note = "automatic: training.patience = " + std::string(validation ? "20" : "0") + " (" + why + ")";
    }
    in.automatic = data.automatic;
    if (!patience_note.empty()) in.automatic.push_back(patience_note);
    if (automatic_n)
      in.automatic.push_back(format("automatic: model.N = %d (%s)", shape.n, default_matrix_size_rule(data.d).c_str()));
    for (std::string& note : kernel_notes(s, shape.n, false)) in.automatic.push_back(std::move(note));
    if (!shape.load.empty()) in.n_source = " (from model.load " + shape.load + ")";
    in.config = initial_configuration<Real>(exec, s.model, shape, operators);
    in.transform = data.transform;
    in.supervised_source = data.source;
  });
  return in;
}

}  // namespace qgml::app
