#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "qgml/io/configuration_io.hpp"
#include "qgml/io/npy.hpp"

#include "temp_dir.hpp"
#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;
using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

// A fresh directory per test, removed afterwards.
}  // namespace

TEMPLATE_TEST_CASE("save/load of a configuration is bit-exact", "[io]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  TempDir dir;
  auto config = qr_configuration<Real>(3, 7, 2024, exec);
  const std::string path = dir.file("config.npy");
  save_configuration(path, config, exec);
  CHECK(fs::exists(dir.file("config.json")));
  const auto loaded = load_configuration<Real>(path, exec);
  REQUIRE(loaded.dimension() == 3);
  REQUIRE(loaded.matrix_size() == 7);
  auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), config.matrices());
  auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), loaded.matrices());
  CHECK(std::memcmp(a.data(), b.data(), a.span() * sizeof(complex_t<Real>)) == 0);
  Precision precision;
  load_matrices(path, &precision);
  CHECK(precision == (std::is_same_v<Real, float> ? Precision::single_precision : Precision::double_precision));
  // No temporary files are left behind.
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path)) ++files;
  CHECK(files == 2);
}

TEST_CASE("the npy file is what NumPy writes: magic, header, complex128 C-order data", "[io]") {
  TempDir dir;
  HostMatrices m = spin_matrices(2);
  const std::string path = dir.file("spin.npy");
  save_matrices(path, m, Precision::double_precision);
  const std::string bytes = read_bytes(path);
  REQUIRE(bytes.size() > 64);
  CHECK(bytes.substr(0, 6) == "\x93NUMPY");
  const std::size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  CHECK((10 + header_len) % 64 == 0);
  const std::string header = bytes.substr(10, header_len);
  CHECK_THAT(header, ContainsSubstring("'descr': '<c16'"));
  CHECK_THAT(header, ContainsSubstring("'fortran_order': False"));
  CHECK_THAT(header, ContainsSubstring("'shape': (3, 2, 2)"));
  CHECK(bytes.size() == 10 + header_len + 3 * 2 * 2 * 16);
  // element (1, 0, 1) = (J_y)_{01} = -i/2
  double re, im;
  std::memcpy(&re, bytes.data() + 10 + header_len + (4 + 1) * 16, 8);
  std::memcpy(&im, bytes.data() + 10 + header_len + (4 + 1) * 16 + 8, 8);
  CHECK(re == 0.0);
  CHECK(im == -0.5);
}

TEST_CASE("malformed configuration files give a clear error naming the file", "[io]") {
  TempDir dir;
  const HostMatrices m = qr_matrices(3, 4, 1);
  const std::string good = dir.file("good.npy");
  save_matrices(good, m, Precision::double_precision);
  const std::string bytes = read_bytes(good);

  SECTION("truncated data") {
    const std::string p = dir.file("truncated.npy");
    write_bytes(p, bytes.substr(0, bytes.size() - 100));
    CHECK_THROWS_WITH(load_matrices(p), ContainsSubstring("truncated.npy") && ContainsSubstring("truncated") &&
                                            ContainsSubstring("(3, 4, 4)"));
  }
  SECTION("truncated header") {
    const std::string p = dir.file("short.npy");
    write_bytes(p, bytes.substr(0, 30));
    CHECK_THROWS_WITH(load_matrices(p), ContainsSubstring("short.npy") && ContainsSubstring("truncated header"));
  }
  SECTION("not an npy file") {
    const std::string p = dir.file("text.npy");
    write_bytes(p, "D,N\n3,4\n5,6\n7,8\n");
    CHECK_THROWS_WITH(load_matrices(p), ContainsSubstring("text.npy") && ContainsSubstring("not an npy file"));
  }
  SECTION("missing file") {
    CHECK_THROWS_WITH(load_matrices(dir.file("absent.npy")),
                      ContainsSubstring("absent.npy") && ContainsSubstring("cannot open"));
  }
  SECTION("wrong rank") {
    const std::string p = dir.file("rank2.npy");
    std::vector<std::complex<double>> z(16);
    write_npy(p, NpyType::complex128, {4, 4}, z.data());
    CHECK_THROWS_WITH(load_matrices(p), ContainsSubstring("rank2.npy") &&
                                            ContainsSubstring("expected shape (D, N, N)") &&
                                            ContainsSubstring("got (4, 4)"));
  }
  SECTION("non-square matrices") {
    const std::string p = dir.file("rect.npy");
    std::vector<std::complex<double>> z(24);
    write_npy(p, NpyType::complex128, {2, 3, 4}, z.data());
    CHECK_THROWS_WITH(load_matrices(p), ContainsSubstring("got (2, 3, 4)"));
  }
  SECTION("real dtype") {
    const std::string p = dir.file("real.npy");
    std::vector<double> z(48);
    write_npy(p, NpyType::float64, {3, 4, 4}, z.data());
    CHECK_THROWS_WITH(load_matrices(p),
                      ContainsSubstring("expected a complex128 or complex64 array") && ContainsSubstring("<f8"));
  }
  SECTION("metadata disagreeing with the array") {
    const std::string p = dir.file("meta.npy");
    save_matrices(p, m, Precision::double_precision);
    std::string json = read_bytes(dir.file("meta.json"));
    json.replace(json.find("\"N\": 4"), 6, "\"N\": 5");
    write_bytes(dir.file("meta.json"), json);
    CHECK_THROWS_WITH(load_matrices(p), ContainsSubstring("meta.json") && ContainsSubstring("\"N\" is 5") &&
                                            ContainsSubstring("holds 4"));
  }
  SECTION("metadata that is not JSON, cut short, or not an object") {
    const std::string p = dir.file("broken.npy");
    save_matrices(p, m, Precision::double_precision);
    const std::string json = read_bytes(dir.file("broken.json"));
    write_bytes(dir.file("broken.json"), json.substr(0, json.rfind('}')));
    CHECK_THROWS_WITH(load_matrices(p), ContainsSubstring("metadata '" + dir.file("broken.json") + "'") &&
                                            ContainsSubstring("not valid JSON") &&
                                            ContainsSubstring("unexpected end of input"));
    write_bytes(dir.file("broken.json"), "D = 3, N = 4\n");
    CHECK_THROWS_WITH(load_matrices(p), ContainsSubstring("broken.json") && ContainsSubstring("not valid JSON"));
    write_bytes(dir.file("broken.json"), "");
    CHECK_THROWS_WITH(load_matrices(p), ContainsSubstring("broken.json") && ContainsSubstring("not valid JSON"));
    write_bytes(dir.file("broken.json"), "[3, 4]\n");
    CHECK_THROWS_WITH(load_matrices(p),
                      ContainsSubstring("broken.json") && ContainsSubstring("expected a JSON object, got array"));
  }
  SECTION("metadata fields of the wrong type or missing") {
    const std::string p = dir.file("typed.npy");
    save_matrices(p, m, Precision::double_precision);
    const std::string json = read_bytes(dir.file("typed.json"));
    std::string quoted = json;
    quoted.replace(quoted.find("\"D\": 3"), 6, "\"D\": \"3\"");
    write_bytes(dir.file("typed.json"), quoted);
    CHECK_THROWS_WITH(load_matrices(p), ContainsSubstring("typed.json") &&
                                            ContainsSubstring("field \"D\" must be an integer, got \"3\""));
    std::string real = json;
    real.replace(real.find("\"N\": 4"), 6, "\"N\": 4.5");
    write_bytes(dir.file("typed.json"), real);
    CHECK_THROWS_WITH(load_matrices(p), ContainsSubstring("field \"N\" must be an integer, got 4.5"));
    write_bytes(dir.file("typed.json"), "{\"format\": \"qgml-matrix-configuration\", \"N\": 4}");
    CHECK_THROWS_WITH(load_matrices(p), ContainsSubstring("field \"D\" is missing but '" + p + "' holds 3"));
    write_bytes(dir.file("typed.json"), "{\"D\": 3, \"N\": 4}");
    CHECK_THROWS_WITH(
        load_matrices(p),
        ContainsSubstring("typed.json") && ContainsSubstring("field \"format\" must be \"qgml-matrix-configuration\""));
    write_bytes(dir.file("typed.json"), "{\"format\": \"qgml-checkpoint\", \"D\": 3, \"N\": 4}");
    CHECK_THROWS_WITH(load_matrices(p), ContainsSubstring("got \"qgml-checkpoint\""));
  }
  SECTION("non-Hermitian matrices") {
    HostMatrices bad = m;
    bad(1, 0, 2) += std::complex<double>(0.5, 0);
    const std::string p = dir.file("nonherm.npy");
    save_matrices(p, bad, Precision::double_precision);
    CHECK_THROWS_WITH(load_matrices(p), ContainsSubstring("matrix 1 is not Hermitian"));
  }
  SECTION("non-finite entries") {
    HostMatrices bad = m;
    bad(2, 1, 1) = std::complex<double>(std::nan(""), 0);
    const std::string p = dir.file("nan.npy");
    save_matrices(p, bad, Precision::double_precision);
    CHECK_THROWS_WITH(load_matrices(p), ContainsSubstring("non-finite entry at (k, i, j) = (2, 1, 1)"));
  }
  SECTION("a path that is not .npy") {
    CHECK_THROWS_WITH(save_matrices(dir.file("x.txt"), m, Precision::double_precision),
                      ContainsSubstring("must end in .npy"));
  }
  SECTION("an unwritable directory leaves nothing behind") {
    CHECK_THROWS_WITH(save_matrices(dir.file("missing/dir/x.npy"), m, Precision::double_precision),
                      ContainsSubstring("cannot create"));
  }
}
