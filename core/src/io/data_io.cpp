#include "qgml/io/data_io.hpp"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>

#include "qgml/common/file_error.hpp"
#include "qgml/io/atomic_file.hpp"
#include "qgml/io/npy.hpp"

#include "regular_file.hpp"

namespace qgml {

namespace {

[[noreturn]] void csv_fail(const std::string& path, const std::string& what) {
  throw FileError("csv file '" + path + "': " + what);
}

[[noreturn]] void npy_fail(const std::string& path, const std::string& what) {
  throw FileError("npy file '" + path + "': " + what);
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// A cell as quoted in an error message, shortened if long.
std::string quoted(std::string_view cell) {
  constexpr std::size_t max_shown = 40;
  // Control bytes as \xNN: a NUL would end the message, an escape sequence would reach the terminal.
  std::string s;
  for (const char ch : cell.substr(0, max_shown)) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(ch)));
      s += hex;
    } else {
      s += ch;
    }
  }
  if (cell.size() > max_shown) s += "...";
  return "'" + s + "'";
}

std::string at_cell(long long line, std::size_t column) {
  return "line " + std::to_string(line) + ", column " + std::to_string(column + 1) + ": ";
}

// For a well-formed decimal number that std::from_chars reported out of range: true if its magnitude
// is too large for a double, false if it is too small (it then reads as zero). Only the decimal exponent
// of the leading non-zero digit matters, and it is far from 0 when from_chars gives up.
bool overflows(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  const auto e = s.find_first_of("eE");
  const std::string_view mantissa = s.substr(0, e);
  long long exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view digits = s.substr(e + 1);
    const bool negative = !digits.empty() && digits[0] == '-';
    if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) digits.remove_prefix(1);
    if (std::from_chars(digits.data(), digits.data() + digits.size(), exponent).ec == std::errc::result_out_of_range)
      exponent = LLONG_MAX / 4;
    if (negative) exponent = -exponent;
  }
  const auto point = mantissa.find('.');
  const long long integer_digits = static_cast<long long>(point == std::string_view::npos ? mantissa.size() : point);
  long long leading_zeros = 0;
  for (const char ch : mantissa) {
    if (ch == '.') continue;
    if (ch != '0') break;
    ++leading_zeros;
  }
  return exponent + integer_digits - 1 - leading_zeros > 0;
}

// Parses a whole (trimmed) cell as a decimal number, independently of the C locale: false if it is not
// one. nan and inf are numbers here (the callers reject them as non-finite); a number beyond the range
// of double reads as +-inf, one below it as +-0.
bool parse_number(std::string_view cell, double& value) {
  std::string_view s = cell;
  if (s.size() > 1 && s[0] == '+' && s[1] != '+' && s[1] != '-') s.remove_prefix(1);  // from_chars rejects '+'
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  const auto result = std::from_chars(s.data(), end, value, std::chars_format::general);
  if (result.ec == std::errc::invalid_argument || result.ptr != end) return false;
  if (result.ec == std::errc::result_out_of_range) {
    const double magnitude = overflows(s) ? std::numeric_limits<double>::infinity() : 0.0;
    value = s[0] == '-' ? -magnitude : magnitude;
  }
  return true;
}

void split_cells(std::string_view line, std::vector<std::string_view>& cells) {
  cells.clear();
  std::size_t start = 0;
  while (true) {
    const auto comma = line.find(',', start);
    cells.push_back(trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

std::string shape_string(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

const char* npy_type_name(NpyType t) {
  switch (t) {
    case NpyType::float32:
      return "float32";
    case NpyType::float64:
      return "float64";
    case NpyType::complex64:
      return "complex64";
    case NpyType::complex128:
      return "complex128";
  }
  return "?";
}

// Shape and finiteness checks before writing: a file qgml writes is one it can read back.
void check_writable(const std::string& path, const HostData& data) {
  const auto fail = [&](const std::string& what) { throw FileError("cannot write points to '" + path + "': " + what); };
  if (data.rows < 1 || data.cols < 1 || data.values.size() != std::size_t(data.rows) * std::size_t(data.cols))
    fail("need rows >= 1, cols >= 1 and rows * cols values, got " + std::to_string(data.rows) + " x " +
         std::to_string(data.cols) + " with " + std::to_string(data.values.size()) + " values");
  for (int r = 0; r < data.rows; ++r)
    for (int c = 0; c < data.cols; ++c)
      if (!std::isfinite(data(r, c)))
        fail("non-finite value at row " + std::to_string(r) + ", column " + std::to_string(c) + " (counting from 0)");
}

}  // namespace

namespace {

// A first line is a header when none of its cells is a number: a row with a number among other cells
// ('NA', an empty field) is a data row, and its other cells are then errors, not a dropped header.
bool is_header(const std::vector<std::string_view>& cells) {
  double value = 0;
  for (const auto cell : cells)
    if (parse_number(cell, value)) return false;
  return true;
}

// Data rows of a CSV file (non-blank lines after an optional header), without parsing the values.
std::int64_t count_csv_rows(const std::string& path) {
  detail::FileInputBuffer in(detail::open_regular_file(path, "csv"));
  std::string line;
  std::vector<std::string_view> cells;
  std::int64_t rows = 0;
  bool first = true;
  long long line_number = 0;
  while (detail::read_bounded_line(in, line, detail::max_line_bytes, line_number + 1, path, "csv")) {
    std::string_view view(line);
    if (++line_number == 1 && view.substr(0, 3) == "\xEF\xBB\xBF") view.remove_prefix(3);
    if (!view.empty() && view.back() == '\r') view.remove_suffix(1);
    if (trim(view).empty()) continue;
    if (first) {
      first = false;
      split_cells(view, cells);
      if (is_header(cells)) continue;
    }
    ++rows;
  }
  return rows;
}

// The CSV reader; only data rows [first, end) are parsed and stored (every row's column count is checked).
HostData read_csv_rows(const std::string& path, std::int64_t first, std::int64_t end) {
  detail::FileInputBuffer in(detail::open_regular_file(path, "csv"));

  HostData data;
  std::string line;
  std::vector<std::string_view> cells;
  long long line_number = 0;
  long long header_line = 0;  // 0: no header
  std::size_t header_columns = 0;
  long long columns_line = 0;  // the first data line, which fixes the number of columns
  bool seen_content = false;
  std::size_t rows = 0;
  double value = 0;
  long long first_line = 0;  // the first non-blank line, a header candidate
  while (detail::read_bounded_line(in, line, detail::max_line_bytes, line_number + 1, path, "csv")) {
    ++line_number;
    std::string_view view(line);
    if (line_number == 1 && view.substr(0, 3) == "\xEF\xBB\xBF") view.remove_prefix(3);  // UTF-8 BOM
    if (!view.empty() && view.back() == '\r') view.remove_suffix(1);
    if (trim(view).empty()) continue;
    split_cells(view, cells);

    if (!seen_content) {
      seen_content = true;
      first_line = line_number;
      if (is_header(cells)) {
        header_line = line_number;
        header_columns = cells.size();
        data.header_line = line_number;
        data.header = std::string(view.substr(0, 200));
        continue;
      }
    }
    if (columns_line == 0) {
      if (cells.size() > std::size_t(INT_MAX))
        csv_fail(path, "line " + std::to_string(line_number) + ": too many columns");
      if (header_line != 0 && header_columns != cells.size())
        csv_fail(path, "the header on line " + std::to_string(header_line) + " has " + std::to_string(header_columns) +
                           " columns, but the first data row (line " + std::to_string(line_number) + ") has " +
                           std::to_string(cells.size()));
      data.cols = static_cast<int>(cells.size());
      columns_line = line_number;
    } else if (cells.size() != std::size_t(data.cols)) {
      csv_fail(path, "line " + std::to_string(line_number) + " has " + std::to_string(cells.size()) +
                         " columns, expected " + std::to_string(data.cols) + " (as on line " +
                         std::to_string(columns_line) + ")");
    }
    const std::int64_t row = std::int64_t(rows);
    if (row < first || row >= end) {
      ++rows;
      continue;
    }
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (!parse_number(cells[c], value))
        csv_fail(path, at_cell(line_number, c) + quoted(cells[c]) + " is not a number" +
                           (line_number == first_line
                                ? " (the line has numbers, so it is data: a header line has no number in it)"
                                : ""));
      if (!std::isfinite(value))
        csv_fail(path, at_cell(line_number, c) + "non-finite value " + quoted(cells[c]) +
                           " (expected a finite number within the range of a double)");
      data.values.push_back(value);
    }
    if (++rows > std::size_t(INT_MAX)) csv_fail(path, "more than " + std::to_string(INT_MAX) + " data rows");
  }
  if (rows == 0) csv_fail(path, header_line != 0 ? "no data rows (only a header line)" : "no data rows");
  data.rows = static_cast<int>(data.cols > 0 ? data.values.size() / std::size_t(data.cols) : 0);
  return data;
}

}  // namespace

HostData read_points_csv(const std::string& path) {
  return read_csv_rows(path, 0, std::numeric_limits<std::int64_t>::max());
}

namespace {

HostData read_npy_points(const std::string& path, const NpyRowSelector& select, std::int64_t* total) {
  const NpyArray a = read_npy_rows(path, select);
  if (total) *total = std::int64_t(a.total_rows);
  if (a.type != NpyType::float32 && a.type != NpyType::float64)
    npy_fail(path, std::string("dtype ") + npy_type_name(a.type) + " ('" + npy_descr(a.type) +
                       "') is not supported for points (expected float32 or float64)");
  if (a.shape.size() != 2)
    npy_fail(path, "expected a 2-D array of points (rows x coordinates), got shape " + shape_string(a.shape));
  if (a.total_rows == 0) npy_fail(path, "no data rows (shape " + shape_string(a.shape) + ")");
  if (a.shape[1] == 0) npy_fail(path, "no columns (shape " + shape_string(a.shape) + ")");
  if (a.shape[0] > std::size_t(INT_MAX) || a.shape[1] > std::size_t(INT_MAX))
    npy_fail(path, "shape " + shape_string(a.shape) + " is too large");

  HostData data;
  data.rows = static_cast<int>(a.shape[0]);
  data.cols = static_cast<int>(a.shape[1]);
  data.values.resize(a.count());
  for (std::size_t i = 0; i < data.values.size(); ++i) {
    if (a.type == NpyType::float32) {
      float f;
      std::memcpy(&f, a.bytes.data() + 4 * i, 4);
      data.values[i] = f;
    } else {
      std::memcpy(&data.values[i], a.bytes.data() + 8 * i, 8);
    }
    if (!std::isfinite(data.values[i]))
      npy_fail(path, "non-finite value " + std::to_string(data.values[i]) + " at (row " +
                         std::to_string(a.first_row + i / a.shape[1]) + ", column " + std::to_string(i % a.shape[1]) +
                         "), counting from 0");
  }
  return data;
}

}  // namespace

HostData read_points_npy(const std::string& path) { return read_npy_points(path, {}, nullptr); }

HostData read_points(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (auto& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (ext == ".csv") return read_points_csv(path);
  if (ext == ".npy") return read_points_npy(path);
  throw FileError("cannot read points from '" + path + "': unknown extension '" + ext + "' (expected .csv or .npy)");
}

HostShard read_points_shard(const std::string& path, int rank, int ranks) {
  const ShardRange check = shard_range(1, ranks, rank);  // validates rank and ranks
  (void)check;
  std::string ext = std::filesystem::path(path).extension().string();
  for (auto& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  HostShard shard;
  if (ext == ".csv") {
    shard.total = ranks == 1 ? -1 : count_csv_rows(path);
    const ShardRange r =
        ranks == 1 ? ShardRange{0, std::numeric_limits<std::int64_t>::max()} : shard_range(shard.total, ranks, rank);
    shard.data = read_csv_rows(path, r.begin, r.end);
    if (ranks == 1) shard.total = shard.data.rows;
    shard.first = ranks == 1 ? 0 : r.begin;
  } else if (ext == ".npy") {
    std::int64_t first = 0;
    shard.data = read_npy_points(
        path,
        [&](std::size_t rows) {
          const ShardRange r = shard_range(std::int64_t(rows), ranks, rank);
          first = r.begin;
          return std::pair<std::size_t, std::size_t>(std::size_t(r.begin), std::size_t(r.end));
        },
        &shard.total);
    shard.first = first;
  } else {
    throw FileError("cannot read points from '" + path + "': unknown extension '" + ext + "' (expected .csv or .npy)");
  }
  return shard;
}

void write_points_csv(const std::string& path, const HostData& data, bool header) {
  check_writable(path, data);
  std::string out;
  out.reserve(data.values.size() * 24);
  if (header) {
    for (int c = 0; c < data.cols; ++c) out += (c ? ",x" : "x") + std::to_string(c);
    out += '\n';
  }
  char buffer[64];
  for (int r = 0; r < data.rows; ++r) {
    for (int c = 0; c < data.cols; ++c) {
      if (c) out += ',';
      // Shortest representation that reads back as the same double.
      const auto result = std::to_chars(buffer, buffer + sizeof(buffer), data(r, c));
      out.append(buffer, result.ptr);
    }
    out += '\n';
  }
  write_file_atomically(path, out);
}

void write_points_npy(const std::string& path, const HostData& data) {
  check_writable(path, data);
  write_npy(path, NpyType::float64, {std::size_t(data.rows), std::size_t(data.cols)}, data.values.data());
}

}  // namespace qgml
