// The inputs of a training run (RunInputs, run_inputs.hpp), prepared before the run directory exists:
// the model's shape, the memory check, the data and the initial configuration.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "qgml/geometry/tangent_spread.hpp"
#include "qgml/model/default_matrix_size.hpp"
#include "qgml/parallel/communicator.hpp"
#include "qgml/train/task.hpp"

#include "common/format.hpp"
#include "data/data_source.hpp"
#include "data/train_data_placement.hpp"
#include "settings/run_setup.hpp"
#include "train/kernel_notes.hpp"
#include "train/run_inputs.hpp"
#include "train/supervised_inputs.hpp"
#include "train/train_memory_check.hpp"
#include "train/train_spaces.hpp"

namespace qgml::app {

// A collective. Everything that can fail on bad input, before the run directory exists: the model's
// shape (model.load or the automatic rule sets model.N of s), the memory check (before the data are read or generated,
// with the N that is trained), the data, the initial configuration.
template <class Real, class DataSpace>
RunInputs<Real, DataSpace> prepare_inputs(const Exec& exec, RunSettings& s, Communicator& comm,
                                          const PointsInMemory* memory) {
  if (is_supervised(s.task)) return prepare_supervised_inputs<Real, DataSpace>(exec, s, comm, memory);
  RunInputs<Real, DataSpace> in;
  const bool automatic_n = !s.model.n && s.model.load.empty();
  const bool from_file = !s.data.file.empty();
  std::optional<ModelShape> shape;
  const std::optional<PlannedData> planned = planned_data(s.data, memory);
  if (planned) {
    run_collectively(comm, [&] {
      if (planned->points < comm.size()) return;  // the data reader's error
      shape = resolve_model_shape(s, planned->d);
      check_run_memory<Real, DataSpace>(exec, s, comm, planned->points,
                                        shard_range(planned->points, comm.size(), comm.rank()).size(), planned->d,
                                        shape->n, from_file);
    });
  }
  const auto placed = placed_data<Real, DataSpace>(exec, s.data, comm, memory);
  in.data = placed.points;
  in.total_points = placed.total;
  in.d = int(in.data.extent(1));
  in.standardization = placed.standardization;
  if (!placed.header_note.empty()) in.automatic.push_back(placed.header_note);
  if (placed.automatic) {
    s.data.standardize = placed.standardized;
    s.choose("data.standardize", placed.standardized ? "true" : "false", "automatic: " + placed.reason);
    in.automatic.push_back(format(
        "automatic: data.standardize = %s (%s; %s)", placed.standardized ? "true" : "false", placed.reason.c_str(),
        placed.standardized ? "not centred at unit spread" : "already centred at unit spread"));
  }
  run_collectively(comm, [&] {
    // Where the data were not known in advance (or a CSV held fewer points than lines), the shape and
    // the memory check with the data read.
    const bool checked = shape && planned->d == in.d && planned->points >= in.total_points;
    if (!shape || shape->n == 0 || planned->d != in.d) shape = resolve_model_shape(s, in.d);
    if (!checked)
      check_run_memory<Real, DataSpace>(exec, s, comm, in.total_points, std::int64_t(in.data.extent(0)), in.d, shape->n,
                                        false);
    if (automatic_n)
      in.automatic.push_back(format("automatic: model.N = %d (%s)", shape->n, default_matrix_size_rule(in.d).c_str()));
    TangentSpreadSettings& spread = s.analysis.geometry.spread;
    if (spread.neighbours == 0 && s.analysis.enabled && spread.enabled) {
      const int reference = TangentSpreadSettings{}.max_reference;
      const int k = resolve_spread_neighbours(0, in.total_points, reference);
      const std::int64_t stride = tangent_spread_stride(in.total_points, reference);
      const std::string why = format(
          "2 %% of the %lld points%s, within %d .. %d", (long long)((in.total_points + stride - 1) / stride),
          stride > 1 ? format(" the neighbours are searched among (every %lld-th)", (long long)stride).c_str() : "",
          spread_neighbours_min, spread_neighbours_max);
      spread.neighbours = k;
      s.choose("analysis.spread_neighbours", std::to_string(k), "automatic: " + why);
      in.automatic.push_back(format("automatic: analysis.spread_neighbours = %d (%s)", k, why.c_str()));
    }
    in.n = shape->n;
    for (std::string& note : kernel_notes(s, in.n, true)) in.automatic.push_back(std::move(note));
    if (!shape->load.empty()) in.n_source = " (from model.load " + shape->load + ")";
    in.config = initial_configuration<Real>(exec, s.model, *shape, in.d);
  });
  return in;
}

}  // namespace qgml::app
