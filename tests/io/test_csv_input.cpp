// What the data readers take as input: a header row only when no cell of the first line is
// a number; regular files only (a FIFO or a device is refused before a read, without blocking); lines
// of bounded length.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <sys/stat.h>

#include "qgml/io/data_io.hpp"
#include "qgml/io/npy.hpp"

#include "temp_dir.hpp"

using Catch::Matchers::ContainsSubstring;

TEST_CASE("csv: a first line with a number among other cells is data, an error naming line 1", "[io][csv][security]") {
  qgml::test::TempDir dir;
  const std::string na = dir.write("na.csv", "1,NA,3\n4,5,6\n7,8,9\n");
  CHECK_THROWS_WITH(qgml::read_points_csv(na), ContainsSubstring("line 1, column 2: 'NA' is not a number"));
  const std::string empty_cell = dir.write("empty_cell.csv", "1,,3\n4,5,6\n");
  CHECK_THROWS_WITH(qgml::read_points_csv(empty_cell), ContainsSubstring("line 1, column 2: '' is not a number"));
  const std::string mixed = dir.write("mixed.csv", "x,2,z\n4,5,6\n");
  CHECK_THROWS_WITH(qgml::read_points_csv(mixed), ContainsSubstring("line 1, column 1"));
}

TEST_CASE("csv: a first line without any number is a header, recorded as skipped", "[io][csv][security]") {
  qgml::test::TempDir dir;
  const qgml::HostData with = qgml::read_points_csv(dir.write("with.csv", "\nx, y ,z\n1,2,3\n4,5,6\n"));
  CHECK(with.rows == 2);
  CHECK(with.header_line == 2);
  CHECK(with.header == "x, y ,z");
  const qgml::HostData without = qgml::read_points_csv(dir.write("without.csv", "1,2,3\n4,5,6\n"));
  CHECK(without.rows == 2);
  CHECK(without.header_line == 0);
  const qgml::HostData empty_names = qgml::read_points_csv(dir.write("names.csv", "a,,NA\n1,2,3\n"));
  CHECK(empty_names.rows == 1);
  CHECK(empty_names.header_line == 1);
}

TEST_CASE("csv and npy: a FIFO is refused at once, without blocking in open()", "[io][csv][npy][security]") {
  qgml::test::TempDir dir;
  for (const char* name : {"points.csv", "points.npy"}) {
    const std::string fifo = dir.file(name);
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THROWS_WITH(qgml::read_points(fifo), ContainsSubstring("is not a regular file (a FIFO)"));
  }
  CHECK_THROWS_WITH(qgml::read_npy(dir.file("points.npy")), ContainsSubstring("is not a regular file (a FIFO)"));
  CHECK_THROWS_WITH(qgml::read_points_shard(dir.file("points.csv"), 0, 2), ContainsSubstring("a FIFO"));
}

TEST_CASE("csv and npy: a device is refused before any read", "[io][csv][npy][security]") {
  CHECK_THROWS_WITH(qgml::read_points_csv("/dev/zero"),
                    ContainsSubstring("is not a regular file (a character device)"));
  CHECK_THROWS_WITH(qgml::read_npy("/dev/zero"), ContainsSubstring("is not a regular file (a character device)"));
}

TEST_CASE("csv: a line longer than 1 MiB is an error naming it, not unbounded memory", "[io][csv][security]") {
  qgml::test::TempDir dir;
  std::string long_line = "1,2\n";
  long_line += std::string((std::size_t(1) << 20) + 10, '1');
  long_line += "\n";
  CHECK_THROWS_WITH(qgml::read_points_csv(dir.write("long.csv", long_line)),
                    ContainsSubstring("line 2 is longer than 1048576 bytes"));
}
