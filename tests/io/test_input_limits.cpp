// Readers against crafted inputs: NPY headers whose shape overflows size_t or claims more
// data than the file holds, negative or malformed dimensions, header lengths beyond the file and
// directories; the strict number parsers behind every setting and option.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "qgml/common/error.hpp"
#include "qgml/io/configuration_io.hpp"
#include "qgml/io/data_io.hpp"
#include "qgml/io/npy.hpp"
#include "qgml/io/parse_number.hpp"

#include "temp_dir.hpp"

using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

// An NPY file written byte by byte: format version 1 (2-byte header length) or 2 (4-byte), the header
// dictionary padded with spaces to `header_bytes` (at least to a 64-byte boundary), then `data` bytes.
std::string npy_bytes(int version, const std::string& dict, std::size_t header_bytes, std::size_t data) {
  const std::size_t prefix = version == 1 ? 10 : 12;
  std::string header = dict;
  std::size_t total = prefix + header.size() + 1;
  std::size_t pad = (64 - total % 64) % 64;
  if (total + pad < header_bytes) pad = header_bytes - total;
  header.append(pad, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(version);
  out += char(0);
  for (std::size_t i = 0; i < prefix - 8; ++i) out += char((header.size() >> (8 * i)) & 0xff);
  return out + header + std::string(data, '\0');
}

std::string dict(const std::string& descr, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
}

}  // namespace

TEST_CASE("npy: a shape whose size overflows size_t is refused, not read out of bounds", "[io][npy][limits]") {
  qgml::test::TempDir s;
  // 2^20 x 2^22 x 2^22 complex128 entries: 2^64 elements, a byte count that wraps to 0, so "0 bytes
  // follow" once matched; each dimension is below the file's size (a 4 MiB header), which the old
  // per-dimension guard checked. load_matrices then read D N^2 entries from an empty buffer (SIGSEGV).
  const std::string p = s.write("wrap.npy", npy_bytes(2, dict("<c16", "(1048576, 4194304, 4194304)"), 4194400, 0));
  CHECK_THROWS_WITH(qgml::load_matrices(p), ContainsSubstring("wrap.npy") &&
                                                ContainsSubstring("(1048576, 4194304, 4194304)") &&
                                                ContainsSubstring("more than 2^64 bytes"));
  // The element count alone fits, the byte count (x 16) does not.
  const std::string q = s.write("bytes.npy", npy_bytes(2, dict("<c16", "(1048576, 1048576, 1048576)"), 1048600, 0));
  CHECK_THROWS_WITH(qgml::read_npy(q), ContainsSubstring("more than 2^64 bytes"));
  // Points: 2^32 x 2^32 float64 with a 2^32-byte sparse file, so that no dimension exceeds its size.
  const std::string r = s.write("points.npy", npy_bytes(2, dict("<f8", "(4294967296, 4294967296)"), 0, 0));
  fs::resize_file(r, (std::uintmax_t(1) << 32) + 128);
  CHECK_THROWS_WITH(qgml::read_points_npy(r), ContainsSubstring("points.npy") && ContainsSubstring("2^64"));
}

TEST_CASE("npy: a header claiming more data than the file holds names the file, the shape and the sizes",
          "[io][npy][limits]") {
  qgml::test::TempDir s;
  const std::string p = s.write("short.npy", npy_bytes(1, dict("<f8", "(10, 3)"), 0, 16));
  CHECK_THROWS_WITH(qgml::read_points_npy(p), ContainsSubstring("short.npy") && ContainsSubstring("(10, 3)") &&
                                                  ContainsSubstring("240 bytes") && ContainsSubstring("only 16 bytes"));
  // A header length beyond the file.
  std::string bytes = npy_bytes(2, dict("<f8", "(1, 3)"), 0, 24);
  bytes[8] = bytes[9] = bytes[10] = bytes[11] = char(0xff);
  const std::string q = s.write("header.npy", bytes);
  CHECK_THROWS_WITH(qgml::read_npy(q), ContainsSubstring("header.npy") && ContainsSubstring("4294967295"));
}

TEST_CASE("npy: negative, fractional and decorated dimensions are refused by name", "[io][npy][limits]") {
  qgml::test::TempDir s;
  const std::string neg = s.write("neg.npy", npy_bytes(1, dict("<c16", "(-3, 3, 3)"), 0, 0));
  CHECK_THROWS_WITH(qgml::load_matrices(neg), ContainsSubstring("neg.npy") && ContainsSubstring("negative dimension"));
  for (const std::string shape :
       {"(3.0, 2)", "(0x3, 2)", "(3L, 2)", "(1e1, 2)", "(+, 2)", "(99999999999999999999, 2)"}) {
    const std::string p = s.write("odd.npy", npy_bytes(1, dict("<f8", shape), 0, 48));
    CHECK_THROWS_WITH(qgml::read_points_npy(p), ContainsSubstring("odd.npy") && ContainsSubstring("malformed shape"));
  }
  // What numpy writes still reads: spaces, a trailing comma.
  const std::string ok = s.write("ok.npy", npy_bytes(1, dict("<f8", "( 2,  3 )"), 0, 48));
  CHECK(qgml::read_points_npy(ok).rows == 2);
}

TEST_CASE("readers: a directory where a file is expected says so, with its path", "[io][limits]") {
  qgml::test::TempDir s;
  for (const std::string name : {"m.npy", "d.csv"}) fs::create_directories(s.path / name);
  CHECK_THROWS_WITH(qgml::load_matrices(s.file("m.npy")), ContainsSubstring("m.npy") &&
                                                              ContainsSubstring("is a directory") &&
                                                              !ContainsSubstring("9223372036854775807"));
  CHECK_THROWS_WITH(qgml::read_points(s.file("m.npy")),
                    ContainsSubstring("m.npy") && ContainsSubstring("is a directory"));
  CHECK_THROWS_WITH(qgml::read_points(s.file("d.csv")),
                    ContainsSubstring("d.csv") && ContainsSubstring("is a directory"));
}

TEST_CASE("parse_integer: an optional sign and decimal digits, nothing else", "[io][parse]") {
  long long v = 0;
  for (const auto& [text, value] : {std::pair<const char*, long long>{"42", 42},
                                    {"-7", -7},
                                    {"+3", 3},
                                    {"0", 0},
                                    {"9223372036854775807", 9223372036854775807LL}}) {
    CHECK(qgml::parse_integer(text, v));
    CHECK(v == value);
  }
  for (const char* text :
       {"2e2", "0x3", "1.5", "3 ", " 3", "", "+", "-", "--3", "+-3", "3L", "1,000", "9223372036854775808", "inf"}) {
    INFO(text);
    CHECK_FALSE(qgml::parse_integer(text, v));
  }
}

TEST_CASE("parse_real: a finite decimal number, nothing else", "[io][parse]") {
  double v = 0;
  for (const auto& [text, value] : {std::pair<const char*, double>{"0.5", 0.5},
                                    {"-2e-3", -2e-3},
                                    {".5", 0.5},
                                    {"3.", 3.0},
                                    {"+1", 1.0},
                                    {"1E5", 1e5},
                                    {"7", 7.0},
                                    {"0", 0.0}}) {
    INFO(text);
    CHECK(qgml::parse_real(text, v));
    CHECK(v == value);
  }
  for (const char* text : {"inf", "-inf", "nan", "NaN", "infinity", "1e400", "1e-320", "0x1p3", "1e", "e5", ".", "1.5 ",
                           " 1.5", "1,5", "1.5.2", "", "+-1", "1e+", "0.5f"}) {
    INFO(text);
    CHECK_FALSE(qgml::parse_real(text, v));
  }
}
