#include "qgml/io/npy.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <limits>
#include <sstream>
#include <system_error>

#include "qgml/common/file_error.hpp"
#include "qgml/io/atomic_file.hpp"
#include "qgml/io/parse_number.hpp"

#include "regular_file.hpp"

namespace qgml {

std::size_t npy_item_size(NpyType t) {
  switch (t) {
    case NpyType::float32:
      return 4;
    case NpyType::float64:
      return 8;
    case NpyType::complex64:
      return 8;
    case NpyType::complex128:
      return 16;
  }
  return 0;
}

const char* npy_descr(NpyType t) {
  switch (t) {
    case NpyType::float32:
      return "<f4";
    case NpyType::float64:
      return "<f8";
    case NpyType::complex64:
      return "<c8";
    case NpyType::complex128:
      return "<c16";
  }
  return "";
}

std::size_t NpyArray::count() const {
  std::size_t n = 1;
  for (auto s : shape) n *= s;  // read_npy checked that the product fits
  return n;
}

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw FileError("npy file '" + path + "': " + what);
}

// How often `key` appears as a key of the header dictionary: quoted in ' or " and followed by ':'.
int key_count(const std::string& header, const std::string& key) {
  int count = 0;
  for (const char quote : {'\'', '"'}) {
    const std::string quoted = quote + key + quote;
    for (auto p = header.find(quoted); p != std::string::npos; p = header.find(quoted, p + 1)) {
      auto q = p + quoted.size();
      while (q < header.size() && header[q] == ' ') ++q;
      if (q < header.size() && header[q] == ':') ++count;
    }
  }
  return count;
}

// The header dictionary has the keys descr, fortran_order and shape and no other, as numpy's reader
// requires (it refuses any other key): a file numpy cannot load is not read here either.
void check_header_keys(const std::string& header, const std::string& path) {
  int depth = 0;
  for (std::size_t i = 0; i < header.size(); ++i) {
    const char ch = header[i];
    if (ch == '{' || ch == '(' || ch == '[') ++depth;
    if (ch == '}' || ch == ')' || ch == ']') --depth;
    if (ch != '\'' && ch != '"') continue;
    const std::size_t close = header.find(ch, i + 1);
    if (close == std::string::npos) fail(path, "malformed header (an unclosed quote): " + header);
    std::size_t q = close + 1;
    while (q < header.size() && header[q] == ' ') ++q;
    const std::string key = header.substr(i + 1, close - i - 1);
    if (depth == 1 && q < header.size() && header[q] == ':' && key != "descr" && key != "fortran_order" &&
        key != "shape")
      fail(path,
           "header has the key '" + key +
               "', which numpy's reader refuses (expected exactly 'descr', 'fortran_order' and 'shape'): " + header);
    i = close;
  }
}

// Value of 'key' in the header dictionary, e.g. "'<f8'", "False", "(3, 4, 4)". A key given twice is an
// error: numpy's reader (a Python dict literal) would keep the last value, this one the first.
std::string header_value(const std::string& header, const std::string& key, const std::string& path) {
  if (key_count(header, key) > 1)
    fail(path, "header repeats the key '" + key + "' (ambiguous: numpy would read its last value): " + header);
  const std::string quoted = "'" + key + "'";
  auto p = header.find(quoted);
  if (p == std::string::npos) fail(path, "header has no '" + key + "' entry: " + header);
  p = header.find(':', p + quoted.size());
  if (p == std::string::npos) fail(path, "malformed header: " + header);
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  if (p >= header.size()) fail(path, "malformed header: " + header);
  std::size_t end = p;
  if (header[p] == '(') {
    end = header.find(')', p);
    if (end == std::string::npos) fail(path, "malformed shape in header: " + header);
    return header.substr(p, end - p + 1);
  }
  if (header[p] == '\'') {
    end = header.find('\'', p + 1);
    if (end == std::string::npos) fail(path, "malformed header: " + header);
    return header.substr(p, end - p + 1);
  }
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  return header.substr(p, end - p);
}

}  // namespace

NpyArray read_npy(const std::string& path) { return read_npy_rows(path, {}); }

NpyArray read_npy_rows(const std::string& path, const NpyRowSelector& select) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path, "is a directory, expected an npy file");
  detail::FileInputBuffer buffer(detail::open_regular_file(path, "npy"));
  std::istream in(&buffer);
  in.seekg(0, std::ios::end);
  const std::streamoff end_offset = in.tellg();
  if (end_offset < 0) fail(path, "cannot determine the file size");
  const auto file_size = static_cast<std::size_t>(end_offset);
  in.seekg(0);
  unsigned char magic[8];
  if (file_size < 10 || !in.read(reinterpret_cast<char*>(magic), 8))
    fail(path, "too short to be an npy file (" + std::to_string(file_size) + " bytes)");
  if (std::memcmp(magic, "\x93NUMPY", 6) != 0) fail(path, "not an npy file (bad magic string)");
  const int major = magic[6];
  std::size_t header_len = 0;
  std::size_t prefix = 0;
  if (major == 1) {
    unsigned char l[2];
    in.read(reinterpret_cast<char*>(l), 2);
    header_len = l[0] | (std::size_t(l[1]) << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    unsigned char l[4];
    if (!in.read(reinterpret_cast<char*>(l), 4)) fail(path, "truncated header");
    header_len = l[0] | (std::size_t(l[1]) << 8) | (std::size_t(l[2]) << 16) | (std::size_t(l[3]) << 24);
    prefix = 12;
  } else {
    fail(path, "unsupported npy format version " + std::to_string(major));
  }
  if (header_len > file_size - prefix)
    fail(path, "truncated header: its length field says " + std::to_string(header_len) + " bytes but only " +
                   std::to_string(file_size - prefix) + " follow (file of " + std::to_string(file_size) + " bytes)");
  std::string header(header_len, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_len));
  if (!in) fail(path, "read error in the header");

  NpyArray a;
  check_header_keys(header, path);
  const std::string descr = header_value(header, "descr", path);
  if (descr == "'<f4'")
    a.type = NpyType::float32;
  else if (descr == "'<f8'")
    a.type = NpyType::float64;
  else if (descr == "'<c8'")
    a.type = NpyType::complex64;
  else if (descr == "'<c16'")
    a.type = NpyType::complex128;
  else
    fail(path, "unsupported dtype " + descr + " (expected little-endian float32, float64, complex64 or complex128)");
  if (header_value(header, "fortran_order", path) != "False")
    fail(path, "Fortran-ordered arrays are not supported (save with C order)");
  const std::string shape = header_value(header, "shape", path);
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')') fail(path, "malformed shape '" + shape + "'");
  // Every dimension a non-negative decimal integer; the element count and the byte count are
  // multiplied with overflow checks, so that no shape can announce less data than it describes.
  std::stringstream ss(shape.substr(1, shape.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto first = item.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    const std::string dim = item.substr(first, item.find_last_not_of(' ') - first + 1);
    long long v = 0;
    if (!parse_integer(dim, v)) fail(path, "malformed shape " + shape + ": '" + dim + "' is not an integer below 2^63");
    if (v < 0) fail(path, "shape " + shape + " has a negative dimension " + dim);
    a.shape.push_back(static_cast<std::size_t>(v));
  }
  const std::size_t item_size = npy_item_size(a.type);
  const std::size_t max_size = std::numeric_limits<std::size_t>::max();
  std::size_t count = 1;
  if (std::find(a.shape.begin(), a.shape.end(), std::size_t(0)) != a.shape.end()) {
    count = 0;
  } else {
    for (std::size_t n : a.shape) {
      if (count > max_size / n / item_size)
        fail(path, "shape " + shape + " of " + descr + " describes more than 2^64 bytes of data, but the file has " +
                       std::to_string(file_size) + " bytes");
      count *= n;
    }
  }
  const std::size_t expected = count * item_size;
  const std::size_t available = file_size - prefix - header_len;
  if (available < expected)
    fail(path, "truncated: the header announces shape " + shape + " of " + descr + " (" + std::to_string(expected) +
                   " bytes of data) but only " + std::to_string(available) + " bytes follow");
  if (available > expected)
    fail(path, "has " + std::to_string(available - expected) + " bytes after the data announced by shape " + shape);
  if (select) {
    if (a.shape.empty()) fail(path, "expected an array with rows, got a 0-d array");
    const std::size_t rows = a.shape[0], row_bytes = rows ? expected / rows : 0;
    const auto [first, end] = select(rows);
    if (first > end || end > rows)
      fail(path,
           "rows [" + std::to_string(first) + ", " + std::to_string(end) + ") requested of " + std::to_string(rows));
    a.first_row = first;
    a.total_rows = rows;
    a.shape[0] = end - first;
    a.bytes.resize((end - first) * row_bytes);
    in.seekg(static_cast<std::streamoff>(prefix + header_len + first * row_bytes));
    in.read(reinterpret_cast<char*>(a.bytes.data()), static_cast<std::streamsize>(a.bytes.size()));
    if (!in) fail(path, "read error");
    return a;
  }
  a.total_rows = a.shape.empty() ? 0 : a.shape[0];
  a.bytes.resize(expected);
  in.read(reinterpret_cast<char*>(a.bytes.data()), static_cast<std::streamsize>(expected));
  if (!in) fail(path, "read error");
  return a;
}

void write_npy(const std::string& path, NpyType type, const std::vector<std::size_t>& shape, const void* data) {
  std::string dict = std::string("{'descr': '") + npy_descr(type) + "', 'fortran_order': False, 'shape': (";
  std::size_t count = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    dict += std::to_string(shape[i]) + (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
    count *= shape[i];
  }
  dict += "), }";
  // Pad so that the data starts on a 64-byte boundary; the header ends with '\n'.
  std::size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(dict.size() & 0xff);
  out += char((dict.size() >> 8) & 0xff);
  out += dict;
  const std::size_t bytes = count * npy_item_size(type);
  out.append(static_cast<const char*>(data), bytes);
  write_file_atomically(path, out);
}

}  // namespace qgml
