// The table operations behind load_supervised_data (supervised_data.hpp): the target columns of the
// data, the rows as features then targets, the statistics of a column, a selection of rows.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/io/data_io.hpp"

#include "common/format.hpp"
#include "settings/run_settings.hpp"

namespace qgml::app {

namespace detail {

// The columns of `cols` that hold the targets: data.target_columns (a comma-separated list, in output
// order) or data.target_column (one), each negative from the end. Errors name the setting and the file.
inline std::vector<int> target_column_indices(const DataSection& data, int cols, const std::string& file) {
  const std::string& list = data.target_columns;
  const bool several = !list.empty();
  if (several && data.target_column != -1)
    throw Error("data.target_column = " + std::to_string(data.target_column) + " and data.target_columns = '" + list +
                "': set one of them (data.target_columns names every target column)");
  std::vector<long> given;
  if (several) {
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t comma = std::min(list.find(',', start), list.size());
      std::string item = list.substr(start, comma - start);
      item.erase(0, item.find_first_not_of(" \t"));
      item.erase(item.find_last_not_of(" \t") + 1);
      char* end = nullptr;
      const long k = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0')
        throw Error("data.target_columns = '" + list + "': '" + item +
                    "' is not a column index (expected integers separated by commas, e.g. -2,-1)");
      given.push_back(k);
      start = comma + 1;
    }
  } else {
    given.push_back(data.target_column);
  }
  const char* setting = several ? "data.target_columns" : "data.target_column";
  if (cols < int(given.size()) + 1)
    throw Error(
        format("data file '%s' has %d column(s): a supervised task needs the features and %d target "
               "column(s) (%s, or data.target_file)",
               file.c_str(), cols, int(given.size()), setting));
  std::vector<int> out;
  for (long k : given) {
    const long index = k < 0 ? cols + k : k;
    const std::string named =
        several ? format("data.target_columns = '%s': column %ld", list.c_str(), k) : format("%s = %ld", setting, k);
    if (index < 0 || index >= cols)
      throw Error(format("%s: data file '%s' has %d columns (0 .. %d, or -1 .. -%d from the end)", named.c_str(),
                         file.c_str(), cols, cols - 1, cols));
    if (std::find(out.begin(), out.end(), int(index)) != out.end())
      throw Error(format("%s names column %ld again", named.c_str(), index));
    out.push_back(int(index));
  }
  return out;
}

// rows (features..., targets...) of `raw`: the targets from the columns `target` in that order (or from
// every column of `targets`), the other columns the features in their order.
inline HostData features_then_targets(const HostData& raw, const std::vector<int>& target, const HostData* targets) {
  HostData out;
  const int count = targets ? targets->cols : int(target.size());
  out.rows = raw.rows;
  out.cols = targets ? raw.cols + count : raw.cols;
  out.values.reserve(std::size_t(out.rows) * out.cols);
  for (int t = 0; t < raw.rows; ++t) {
    for (int k = 0; k < raw.cols; ++k)
      if (targets || std::find(target.begin(), target.end(), k) == target.end()) out.values.push_back(raw(t, k));
    for (int j = 0; j < count; ++j) out.values.push_back(targets ? (*targets)(t, j) : raw(t, target[std::size_t(j)]));
  }
  return out;
}

// The mean and the standard deviation (1/T) of column k of the T rows of `h`, the sums run on the values
// divided by a power of two at least their largest magnitude (exact, as in data_statistics,
// qgml/data/standardize.hpp): values of any magnitude a double holds, 1e200 or 1e-200, give finite
// statistics. Throws naming `what` for a value that is not finite, or a spread beyond a double's range.
struct ColumnStatistics {
  double mean = 0, sd = 0;
};

inline ColumnStatistics column_statistics(const HostData& h, int k, const std::string& what) {
  ColumnStatistics out;
  if (h.rows == 0) return out;
  double largest = 0;
  for (int t = 0; t < h.rows; ++t) {
    const double v = h(t, k);
    if (!std::isfinite(v)) throw Error(format("%s: a value is not finite (%g)", what.c_str(), v));
    largest = std::max(largest, std::fabs(v));
  }
  if (largest == 0) return out;
  int shift = 0;
  std::frexp(largest, &shift);
  const double down1 = std::ldexp(1.0, -shift / 2), down2 = std::ldexp(1.0, -(shift - shift / 2));
  double mean = 0, var = 0;
  for (int t = 0; t < h.rows; ++t) mean += h(t, k) * down1 * down2;
  mean /= h.rows;
  for (int t = 0; t < h.rows; ++t) {
    const double y = h(t, k) * down1 * down2 - mean;
    var += y * y;
  }
  out.mean = std::ldexp(mean, shift);
  out.sd = std::ldexp(std::sqrt(var / h.rows), shift);
  if (!std::isfinite(out.sd) || !std::isfinite(out.mean))
    throw Error(what + ": the spread of the values is beyond the range of a double");
  return out;
}

inline HostData select_rows(const HostData& h, const std::vector<int>& rows) {
  HostData out;
  out.rows = int(rows.size());
  out.cols = h.cols;
  for (int r : rows)
    out.values.insert(out.values.end(), h.values.begin() + std::size_t(r) * h.cols,
                      h.values.begin() + std::size_t(r + 1) * h.cols);
  return out;
}

}  // namespace detail

}  // namespace qgml::app
