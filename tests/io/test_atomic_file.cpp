// The atomic writer against names planted before it runs: a link or a file at its
// temporary name is never written through nor truncated; the write still lands at its path.
#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

#include "qgml/io/atomic_file.hpp"

#include "temp_dir.hpp"

namespace fs = std::filesystem;

namespace {
std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

TEST_CASE("an atomic write passes over a link planted at its temporary name", "[io][atomic][security]") {
  qgml::test::TempDir dir;
  const fs::path outside = dir.path / "outside";
  dir.write("outside", "unchanged");
  const fs::path path = dir.path / "result.txt";
  const fs::path planted = path.string() + ".tmp." + std::to_string(::getpid());
  fs::create_symlink(outside, planted);
  qgml::write_file_atomically(path.string(), std::string("written"));
  CHECK(read(outside) == "unchanged");
  CHECK(read(path) == "written");
  CHECK(fs::is_symlink(fs::symlink_status(planted)));
  CHECK_FALSE(fs::is_symlink(fs::symlink_status(path)));
}

TEST_CASE("an atomic write replaces a link at its path, never the link's target", "[io][atomic][security]") {
  qgml::test::TempDir dir;
  const fs::path outside = dir.path / "outside";
  dir.write("outside", "unchanged");
  const fs::path path = dir.path / "result.txt";
  fs::create_symlink(outside, path);
  qgml::write_file_atomically(path.string(), std::string("written"));
  CHECK(read(outside) == "unchanged");
  CHECK_FALSE(fs::is_symlink(fs::symlink_status(path)));
  CHECK(read(path) == "written");
}

TEST_CASE("an atomic write leaves a file at its temporary name as it was", "[io][atomic][security]") {
  qgml::test::TempDir dir;
  const fs::path path = dir.path / "result.txt";
  const std::string taken = path.string() + ".tmp." + std::to_string(::getpid());
  dir.write(fs::path(taken).filename().string(), "another writer's");
  qgml::write_file_atomically(path.string(), std::string("written"));
  CHECK(read(taken) == "another writer's");
  CHECK(read(path) == "written");
}
