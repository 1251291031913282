// Fuzz-style robustness: thousands of random mutations of a valid config, CSV data file, NPY matrix
// file and its JSON metadata go through the program's readers. Every input must either load or raise
// qgml::Error with a message; any other exception, crash or sanitizer report (under the debug-asan
// preset) fails.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "qgml/common/error.hpp"
#include "qgml/common/random.hpp"
#include "qgml/io/configuration_io.hpp"
#include "qgml/io/data_io.hpp"

#include "settings/config.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;

// One random edit: flip, insert, delete, duplicate a span, or truncate.
std::string mutate(std::string s, const qgml::CounterRng& rng, std::uint64_t& c) {
  const int edits = 1 + int(rng.uniform(c++) * 4);
  const char alphabet[] = "0123456789-+.eE,:\n #[]{}\"'abcnaNinfINF\t\r\\";
  for (int e = 0; e < edits; ++e) {
    const std::size_t pos = s.empty() ? 0 : std::size_t(rng.uniform(c++) * s.size());
    switch (int(rng.uniform(c++) * 5)) {
      case 0:
        if (!s.empty()) s[pos] = char(rng.bits(c++) & 0xff);
        break;
      case 1:
        s.insert(pos, 1, alphabet[rng.bits(c++) % (sizeof(alphabet) - 1)]);
        break;
      case 2:
        if (!s.empty()) s.erase(pos, 1 + std::size_t(rng.uniform(c++) * 8));
        break;
      case 3:
        s.insert(pos, s.substr(pos, std::size_t(rng.uniform(c++) * 16)));
        break;
      default:
        s = s.substr(0, pos);
    }
  }
  return s;
}

// Runs f; true if it succeeded, false if it raised qgml::Error; any other exception propagates.
template <class F>
bool loads(F&& f) {
  try {
    f();
    return true;
  } catch (const qgml::Error& e) {
    REQUIRE(std::string(e.what()).size() > 10);
    return false;
  }
}

}  // namespace

TEST_CASE("1000 mutations each of a config, a CSV, an NPY file and its JSON metadata: loaded or a qgml::Error",
          "[fuzz]") {
  qgml::test::TempDir scratch;
  const std::string config =
      "data:\n  generator: sphere\n  points: 100\n  noise: 0.1\nmodel:\n  N: 4\n  precision: double\n"
      "training:\n  epochs: 3\n  lr: 0.01\n  w: 0.25\n  penalty: frobenius\nanalysis:\n  metric: quantum\n";
  const std::string csv = "x,y,z\n0.1,0.2,0.3\n-1e-3,2.5,7\n1,2,3\n4,5,6\n";
  qgml::save_matrices(scratch.write("seed.npy", ""), qgml::spin_matrices(3), qgml::Precision::double_precision);
  std::ifstream in(scratch.path / "seed.npy", std::ios::binary);
  const std::string npy((std::istreambuf_iterator<char>(in)), {});
  std::ifstream meta_in(scratch.path / "seed.json", std::ios::binary);
  const std::string meta((std::istreambuf_iterator<char>(meta_in)), {});
  fs::remove(scratch.path / "seed.json");
  const qgml::CounterRng rng(2024, 1);
  std::uint64_t c = 0;
  int ok_config = 0, ok_csv = 0, ok_npy = 0, ok_meta = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::string p = scratch.write("c.yaml", mutate(config, rng, c));
    ok_config += loads([&] { qgml::app::load_config(p, {}); });
    const std::string q = scratch.write("d.csv", mutate(csv, rng, c));
    ok_csv += loads([&] { qgml::read_points_csv(q); });
    const std::string r = scratch.write("m.npy", mutate(npy, rng, c));
    ok_npy += loads([&] { qgml::load_matrices(r); });
    // The JSON metadata beside an intact array: a damaged one is an error, never a crash.
    const std::string npy_path = scratch.write("meta.npy", npy);
    scratch.write("meta.json", mutate(meta, rng, c));
    ok_meta += loads([&] { qgml::load_matrices(npy_path); });
  }
  // The mutations are mostly harmless to YAML and mostly fatal to the binary format.
  INFO("loaded: config " << ok_config << ", csv " << ok_csv << ", npy " << ok_npy << ", metadata " << ok_meta
                         << " of 1000");
  CHECK(ok_config > 0);
  CHECK(ok_config < 1000);
  CHECK(ok_csv < 1000);
  CHECK(ok_npy < 1000);
  CHECK(ok_meta < 1000);
}

// Found by tests/fuzz/fuzz_config: text after the top-level node that the YAML parser cannot place
// ("{a: 1}, b") made yaml-cpp's LoadAll loop forever, allocating (jbeder/yaml-cpp#1319). It must be
// refused with the line and column.
TEST_CASE("fuzz regression: a stray ',' after the top-level YAML node is refused, not looped on", "[io][fuzz]") {
  qgml::test::TempDir scratch;
  for (const std::string text : {"{data: {points: 20}}, b\n", "data:\n  points: 20\n}\n"}) {
    const std::string path = scratch.write("stray.yaml", text);
    CHECK_THROWS_AS(qgml::app::load_config(path, {}), qgml::Error);
  }
  const std::string path = scratch.write("flow.yaml", "{data: {points: 20}}, training\n");
  CHECK_THROWS_WITH(qgml::app::load_config(path, {}),
                    Catch::Matchers::ContainsSubstring("line 1, column 21: not valid YAML"));
}

// Found by tests/fuzz/fuzz_checkpoint: a number beyond the range of double in a JSON file (state.json,
// a matrices sidecar) made nlohmann-json throw out_of_range, which escaped the readers as a bare
// exception instead of a qgml::Error naming the file.
TEST_CASE("fuzz regression: a JSON number beyond double is refused with the file's name", "[io][fuzz]") {
  qgml::test::TempDir scratch;
  const std::string npy = scratch.write("m.npy", "");
  qgml::HostMatrices m{1, 1, {{0.5, 0.0}}};
  qgml::save_matrices(npy, m, qgml::Precision::double_precision);
  scratch.write("m.json", "{\"format\": \"qgml-matrix-configuration\", \"D\": 1e400, \"N\": 1}");
  CHECK_THROWS_WITH(qgml::load_matrices(npy), Catch::Matchers::ContainsSubstring("m.json") &&
                                                  Catch::Matchers::ContainsSubstring("not valid JSON"));
}
