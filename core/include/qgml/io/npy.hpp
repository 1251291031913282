// Reading and writing NumPy .npy files (format versions 1.0-3.0, little-endian, C order).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace qgml {

// Element types qgml reads and writes, by their NumPy descr.
enum class NpyType { float32, float64, complex64, complex128 };

std::size_t npy_item_size(NpyType t);
const char* npy_descr(NpyType t);

struct NpyArray {
  NpyType type = NpyType::float64;
  std::vector<std::size_t> shape;
  std::vector<unsigned char> bytes;  // raw little-endian data, C order
  std::size_t first_row = 0;         // read_npy_rows: the first row held, and the file's number of rows
  std::size_t total_rows = 0;

  std::size_t count() const;
};

// Throws qgml::FileError naming the file and what was wrong (not an npy file, unsupported dtype,
// Fortran order, truncated data, ...).
NpyArray read_npy(const std::string& path);

// Reads only the rows [first, end) of the leading dimension that select(rows in the file) returns
// (e.g. one rank's shard); shape[0] is then end - first. The whole header and the file size are
// still checked.
using NpyRowSelector = std::function<std::pair<std::size_t, std::size_t>(std::size_t)>;
NpyArray read_npy_rows(const std::string& path, const NpyRowSelector& select);

// Writes atomically: to a temporary file in the same directory, then renamed over path.
void write_npy(const std::string& path, NpyType type, const std::vector<std::size_t>& shape, const void* data);

}  // namespace qgml
