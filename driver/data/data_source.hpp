// The data a run trains on: a seeded generator or a CSV/NPY file, as configured (data.* settings).
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "qgml/data/datasets.hpp"
#include "qgml/data/manifolds.hpp"
#include "qgml/data/standardize.hpp"
#include "qgml/io/data_io.hpp"
#include "qgml/parallel/communicator.hpp"

#include "settings/run_settings.hpp"

namespace qgml::app {

// Points handed over in memory by the C, Fortran or Python interface (data.array): T x D reals in host
// memory, row-major, float64 or float32; read while the data are loaded, never kept.
struct PointsInMemory {
  const void* values = nullptr;
  std::int64_t rows = 0;
  int columns = 0;
  bool single_precision = false;

  double operator()(std::int64_t r, int c) const {
    const std::size_t i = std::size_t(r) * std::size_t(columns) + std::size_t(c);
    return single_precision ? double(static_cast<const float*>(values)[i]) : static_cast<const double*>(values)[i];
  }
};

// Throws naming the array (data.array `name`), features or targets (the columns `targets`), the row and
// the column of the first value that is not finite: points in memory are checked before any copy to the
// device, as a file's values are when read.
inline void check_finite(const PointsInMemory& m, const std::string& name, const std::vector<int>& targets = {}) {
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (int k = 0; k < m.columns; ++k)
      if (const double v = m(r, k); !std::isfinite(v)) {
        const bool target = std::find(targets.begin(), targets.end(), k) != targets.end();
        throw Error("data.array '" + name + "': the " + (target ? "targets" : "features") + " have " +
                    (std::isnan(v) ? std::string("NaN")
                     : v > 0       ? std::string("inf")
                                   : std::string("-inf")) +
                    " at row " + std::to_string(r) + ", column " + std::to_string(k) +
                    (target ? " (a target column)" : "") + " of the array (counting from 0): expected finite numbers");
      }
}

// This process's rows [first, first + points.extent(0)) of the T = total points.
template <class Real, class ExecSpace>
struct DataShard {
  RealMatrix<Real, typename ExecSpace::memory_space> points;
  std::int64_t first = 0;
  std::int64_t total = 0;
  // What data.standardize applied (qgml/data/standardize.hpp); empty mean when it is off.
  Standardization standardization;
  // data.standardize = auto: the choice (standardization_needed) and its reason, for the log and the
  // run's config.yaml.
  bool automatic = false, standardized = false;
  std::string reason;
  // "data.file: line N is a header (...), skipped" when the CSV file has one, for the log.
  std::string header_note;
};

// A collective: every rank generates, or reads from data.file, only its shard shard_range(T, P, rank)
// of the points (generated point t depends only on the seed and t, so the union over ranks is the
// one-process data set); data.standardize uses the mean and spread of all T points. An error on any
// rank (e.g. a bad row in a file, which only the rank holding it parses) is raised on every rank.
// With data.array set, the points are `memory`'s rows (the same on every rank).
template <class Real, class ExecSpace>
DataShard<Real, ExecSpace> load_data_shard(const ExecSpace& exec, const DataSection& data, Communicator& comm,
                                           const PointsInMemory* memory = nullptr) {
  DataShard<Real, ExecSpace> shard;
  run_collectively(comm, [&] {
    const std::string& array = data.array;
    if (!array.empty() || memory) {
      if (!memory || array.empty())
        throw Error(array.empty() ? std::string("points in memory need the setting data.array (what they are)")
                                  : "data.array = '" + array +
                                        "': these points were handed over in memory by the C, Fortran or "
                                        "Python interface, and only that interface can pass them again (the "
                                        "program reads data.file or data.generator)");
      if (!data.file.empty())
        throw Error("data.file = '" + data.file + "' and points in memory (data.array = '" + array +
                    "') are both given: give one");
      if (memory->rows < comm.size() || memory->columns < 1)
        throw Error("data.array = '" + array + "': " + std::to_string(memory->rows) + " x " +
                    std::to_string(memory->columns) + " points, need at least " + std::to_string(comm.size()) +
                    " point(s) of at least 1 coordinate");
      check_finite(*memory, array);
      const ShardRange r = shard_range(memory->rows, comm.size(), comm.rank());
      HostData h;
      h.rows = int(r.size());
      h.cols = memory->columns;
      h.values.resize(std::size_t(h.rows) * std::size_t(h.cols));
      for (int i = 0; i < h.rows; ++i)
        for (int k = 0; k < h.cols; ++k) h(i, k) = (*memory)(r.begin + i, k);
      shard.points = to_device_points<Real>(exec, h);
      shard.first = r.begin;
      shard.total = memory->rows;
      return;
    }
    const std::string& file = data.file;
    if (!file.empty()) {
      HostShard h = read_points_shard(file, comm.rank(), comm.size());
      if (h.data.rows == 0)
        throw Error("data file '" + file + "' has " + std::to_string(h.total) + " points, too few for " +
                    std::to_string(comm.size()) + " ranks (every rank needs at least one point)");
      shard.points = to_device_points<Real>(exec, h.data);
      if (h.data.header_line > 0) {
        std::string header = h.data.header;
        for (char& ch : header)  // printed on the terminal: no control sequence from the file
          if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
        shard.header_note = "data.file: line " + std::to_string(h.data.header_line) + " is a header (" + header +
                            "; no cell is a number), skipped";
      }
      shard.first = h.first;
      shard.total = h.total;
      return;
    }
    const std::int64_t total = data.points;
    if (total < comm.size())
      throw Error("data.points = " + std::to_string(total) + " is too few for " + std::to_string(comm.size()) +
                  " ranks (every rank needs at least one point)");
    const ShardRange r = shard_range(total, comm.size(), comm.rank());
    const int t = int(r.size());
    const double noise = data.noise;
    const std::uint64_t seed = data.seed;
    const std::string& g = data.generator;
    const std::int64_t f = r.begin;
    auto& x = shard.points;
    if (g == "sphere")
      x = sphere_points<Real>(exec, t, data.dimension, noise, seed, f);
    else if (g == "circle")
      x = circle_points<Real>(exec, t, data.radius, noise, seed, f);
    else if (g == "spiral")
      x = spiral_points<Real>(exec, t, noise, seed, f);
    else if (g == "line")
      x = line_points<Real>(exec, t, noise, seed, f);
    else if (g == "swiss_roll")
      x = swiss_roll_points<Real>(exec, t, noise, seed, f);
    else if (g == "hypercube")
      x = hypercube_points<Real>(exec, t, data.intrinsic_dimension, data.dimension, noise, seed, f);
    else if (g == "sphere10")
      x = benchmark_sphere10_points<Real>(exec, t, noise, seed, f);
    else if (g == "affine")
      x = affine_points<Real>(exec, t, noise, seed, f);
    else if (g == "helix")
      x = helix_points<Real>(exec, t, noise, seed, f);
    else if (g == "mobius")
      x = mobius_points<Real>(exec, t, noise, seed, f);
    else
      x = curve13_points<Real>(exec, t, noise, seed, f);
    shard.first = r.begin;
    shard.total = total;
  });
  // A standardisation error (identical points, a spread beyond a double) names the data it is about.
  const std::string source = !data.array.empty()  ? "data.array '" + data.array + "'"
                             : !data.file.empty() ? "data file '" + data.file + "'"
                                                  : "data.generator " + data.generator;
  try {
    if (!data.standardize) {
      shard.automatic = true;
      const Standardization st = data_statistics(exec, shard.points, comm);
      shard.standardized = standardization_needed(st);
      char buffer[160];
      std::snprintf(buffer, sizeof buffer, "spread s = %.3g per coordinate, mean %.3g per coordinate", st.scale,
                    mean_rms(st));
      shard.reason = buffer;
      if (shard.standardized) {
        apply_standardization(exec, shard.points, st);
        shard.standardization = st;
      }
    } else if (*data.standardize) {
      shard.standardization = standardize(exec, shard.points, comm);
      shard.standardized = true;
    }
  } catch (const Error& e) {
    throw Error(source + ": " + e.what());
  }
  return shard;
}

// All T points in this process (the commands that do not distribute their work).
template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> load_data(const ExecSpace& exec, const DataSection& data) {
  SelfCommunicator self;
  return load_data_shard<Real>(exec, data, self).points;
}

}  // namespace qgml::app
