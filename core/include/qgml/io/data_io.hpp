// Point data sets from files: T x D real matrices in CSV or NumPy .npy, read on the host and copied to
// the device. Every failure of a file throws qgml::FileError naming it and where in it the problem is.
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/parallel/communicator.hpp"

namespace qgml {

// Host-side T x D points in double, row-major: coordinate c of point r at r * cols + c.
struct HostData {
  int rows = 0;
  int cols = 0;
  std::vector<double> values;
  // A CSV file's header line (its 1-based number, 0 when the file has none) and its text (at most 200
  // bytes), for the log.
  long long header_line = 0;
  std::string header = {};

  double& operator()(int r, int c) { return values[std::size_t(r) * cols + c]; }
  const double& operator()(int r, int c) const { return values[std::size_t(r) * cols + c]; }
};

// CSV: one point per line, coordinates separated by commas (spaces and tabs around a cell are ignored,
// so are blank lines, a UTF-8 byte-order mark and '\r' line ends). The first non-blank line is a header,
// and skipped (HostData::header_line), when none of its cells is a number; a first line with a number
// among other cells ('NA', an empty field) is data, and an error. Only regular files are read (a FIFO or
// a device is refused before any read), lines of at most 1 MiB. Errors name the file and the 1-based line and column:
// "line 7, column 3: 'abc' is not a number", "line 5 has 2 columns, expected 3",
// "line 4, column 1: non-finite value" (nan, inf, or a number too large for a double), "no data rows".
// Numbers are parsed independently of the C locale.
HostData read_points_csv(const std::string& path);

// NumPy .npy: a 2-D (T x D) float32 or float64 C-order array. Other ranks and dtypes, empty arrays and
// non-finite values are errors naming the file (and the 0-based row and column of a non-finite value).
HostData read_points_npy(const std::string& path);

// By extension (case-insensitive): .csv or .npy; anything else is an error.
HostData read_points(const std::string& path);

// One rank's share of a points file: the rows [first, first + data.rows) of the file's `total` rows,
// with first = shard_range(total, ranks, rank).begin. Only those rows are parsed and checked (in a CSV
// file every row's column count is checked too), so a bad value is reported by the rank that holds it;
// an NPY file is read from the shard's offset. An empty shard (more ranks than rows) has data.rows = 0.
struct HostShard {
  HostData data;
  std::int64_t first = 0;
  std::int64_t total = 0;
};
HostShard read_points_shard(const std::string& path, int rank, int ranks);

// Writes atomically (temporary file + rename). CSV: a header line x0,x1,... when `header`, shortest
// round-trip representation of every value (reading it back gives the same doubles). NPY: float64, shape (rows, cols),
// C order. Non-finite values and a shape that does not match values.size() are errors naming the file.
void write_points_csv(const std::string& path, const HostData& data, bool header = false);
void write_points_npy(const std::string& path, const HostData& data);

// Copies host points into a new T x D device View of Real (rounded to nearest); a value outside the
// range of Real is an error naming its (0-based) row and column.
template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> to_device_points(const ExecSpace& exec, const HostData& data) {
  QGML_REQUIRE(data.rows >= 1 && data.cols >= 1 && data.values.size() == std::size_t(data.rows) * data.cols,
               "qgml::to_device_points: need rows >= 1, cols >= 1 and rows * cols values, got " +
                   std::to_string(data.rows) + " x " + std::to_string(data.cols) + " with " +
                   std::to_string(data.values.size()) + " values");
  RealMatrix<Real, typename ExecSpace::memory_space> x(
      Kokkos::ViewAllocateWithoutInitializing("qgml::to_device_points"), data.rows, data.cols);
  auto mirror = Kokkos::create_mirror_view(x);
  for (int r = 0; r < data.rows; ++r)
    for (int c = 0; c < data.cols; ++c) {
      const double v = data(r, c);
      if (!(std::fabs(v) <= double(std::numeric_limits<Real>::max())))
        throw Error("qgml::to_device_points: value " + std::to_string(v) + " at row " + std::to_string(r) +
                    ", column " + std::to_string(c) + " (counting from 0) is not finite in " +
                    (std::is_same_v<Real, float> ? "float" : "double"));
      mirror(r, c) = static_cast<Real>(v);
    }
  Kokkos::deep_copy(exec, x, mirror);
  qgml::fence(exec, "qgml::to_device_points: host mirror must outlive the copy");
  return x;
}

// Copies T x D points (any memory space, any real type) to the host, widened to double.
template <class Real, class... Properties>
HostData to_host_data(const Kokkos::View<Real**, Properties...>& points) {
  Kokkos::fence();  // the kernels that filled `points` may still run (no copy, hence no fence, on host spaces)
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), points);
  HostData data{int(points.extent(0)), int(points.extent(1)), {}};
  data.values.resize(std::size_t(data.rows) * data.cols);
  for (int r = 0; r < data.rows; ++r)
    for (int c = 0; c < data.cols; ++c) data(r, c) = double(h(r, c));
  return data;
}

}  // namespace qgml
