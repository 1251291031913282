// The C interface (bindings/c, qgml/c_api.h): status codes and messages, settings, models, training with
// points in memory, run directories, and the analyses on caller-owned arrays against the library.
#include <Kokkos_Core.hpp>

#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "qgml/c_api.h"
#include "qgml/io/configuration_io.hpp"
#include "qgml/io/data_io.hpp"
#include "qgml/io/npy.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/train/evaluate.hpp"

#include "commands.hpp"
#include "temp_dir.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

using qgml::test::same_bits;

namespace {

// REQUIRE that a call succeeded, showing the library's message when it did not. A function, not a
// macro body: nvcc 13's cudafe++ did not finish this file (over 20 minutes) with the REQUIRE expanded
// inside the helpers below.
void require_ok(int status, const char* call) {
  INFO(call << ": " << qgml_last_error());
  REQUIRE(status == QGML_OK);
}

}  // namespace

#define REQUIRE_OK(call) require_ok((call), #call)

namespace {

// A fresh directory under the system's temporary directory.
fs::path scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("qgml-c-api-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

// T points on the unit sphere in R^3 (a Fibonacci lattice), row-major T x 3.
std::vector<double> sphere(int t) {
  std::vector<double> x(std::size_t(t) * 3);
  const double golden = M_PI * (3.0 - std::sqrt(5.0));
  for (int i = 0; i < t; ++i) {
    const double z = 1.0 - 2.0 * (i + 0.5) / t, r = std::sqrt(1.0 - z * z), phi = golden * i;
    x[3 * i] = r * std::cos(phi);
    x[3 * i + 1] = r * std::sin(phi);
    x[3 * i + 2] = z;
  }
  return x;
}

// Interleaved (re, im) of HostMatrices.
std::vector<double> interleaved(const qgml::HostMatrices& m) {
  std::vector<double> v(2 * m.values.size());
  for (std::size_t i = 0; i < m.values.size(); ++i) {
    v[2 * i] = m.values[i].real();
    v[2 * i + 1] = m.values[i].imag();
  }
  return v;
}

struct Settings {
  qgml_settings* s = nullptr;
  Settings() { REQUIRE_OK(qgml_settings_create(&s)); }
  ~Settings() { qgml_settings_destroy(s); }
  void set(const char* key, const std::string& value) { REQUIRE_OK(qgml_settings_set(s, key, value.c_str())); }
};

// A short training of the fuzzy sphere (docs/math.md A.1) into dir.
void short_training(Settings& s, const fs::path& dir, int epochs) {
  s.set("model.N", "3");
  s.set("training.epochs", std::to_string(epochs));
  s.set("training.batch_size", "50");
  s.set("training.lr", "0.02");
  s.set("training.w", "0.25");
  s.set("training.checkpoint_every", "1");
  s.set("output.directory", dir.string());
  s.set("output.plots", "false");
}

std::vector<double> history(const qgml_run* r) {
  int epochs = -1;
  REQUIRE_OK(qgml_run_history(r, &epochs, nullptr, nullptr, nullptr));
  std::vector<double> loss(std::size_t(std::max(epochs, 0)));
  REQUIRE_OK(qgml_run_history(r, &epochs, loss.data(), nullptr, nullptr));
  return loss;
}

std::vector<double> matrices(const qgml_run* r) {
  qgml_model* m = nullptr;
  REQUIRE_OK(qgml_run_model(r, &m));
  int d = 0, n = 0;
  REQUIRE_OK(qgml_model_shape(m, &d, &n));
  std::vector<double> v(std::size_t(2) * d * n * n);
  REQUIRE_OK(qgml_model_matrices(m, v.data(), QGML_FLOAT64));
  qgml_model_destroy(m);
  return v;
}

}  // namespace

TEST_CASE("C API: Kokkos started by the host is left alone", "[bindings][c-api]") {
  REQUIRE(Kokkos::is_initialized());
  int started = -1;
  REQUIRE_OK(qgml_initialize(2, &started));
  CHECK(started == 0);
  REQUIRE_OK(qgml_finalize());
  CHECK(Kokkos::is_initialized());
  CHECK(std::string(qgml_version()).find(Kokkos::DefaultExecutionSpace::name()) != std::string::npos);
}

TEST_CASE("C API: settings are validated at once, naming the key", "[bindings][c-api]") {
  Settings s;
  CHECK(qgml_settings_set(s.s, "training.learnin_rate", "0.1") == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()) ==
        "qgml_settings_set: unknown setting 'training.learnin_rate' (did you mean 'training.lr'?)");
  CHECK(qgml_settings_set(s.s, "training.epochs", "ten") == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("training.epochs = 'ten': expected an integer") != std::string::npos);
  CHECK(qgml_settings_set(s.s, "model.precision", "half") == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("expected one of double, float") != std::string::npos);
  s.set("training.epochs", "12");
  char buf[64];
  size_t needed = 0;
  REQUIRE_OK(qgml_settings_get(s.s, "training.epochs", buf, sizeof buf, &needed));
  CHECK(std::string(buf) == "12");
  CHECK(needed == 3);
  CHECK(std::string(qgml_last_error()).empty());  // a successful call clears it
  REQUIRE_OK(qgml_settings_get(s.s, "training.lr", buf, sizeof buf, nullptr));
  CHECK(std::string(buf) == "0.01");  // the default
  CHECK(qgml_settings_get(s.s, "training.epochs", buf, 2, &needed) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(needed == 3);
  CHECK(qgml_settings_get(s.s, "model.n", buf, sizeof buf, nullptr) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("unknown setting 'model.n'") != std::string::npos);
  CHECK(qgml_settings_load(s.s, "/nonexistent/qgml.yaml") == QGML_ERROR_IO);
  CHECK(std::string(qgml_last_error()).find("cannot open") != std::string::npos);
  const fs::path dir = scratch("settings");
  const fs::path yaml = dir / "bad.yaml";
  {
    std::FILE* f = std::fopen(yaml.c_str(), "w");
    std::fputs("training:\n  epochz: 3\n", f);
    std::fclose(f);
  }
  CHECK(qgml_settings_load(s.s, yaml.c_str()) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("unknown setting 'training.epochz' (did you mean 'training.epochs'?)") !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("C API: null handles, null pointers and bad sizes are refused with a message", "[bindings][c-api]") {
  const qgml::HostMatrices spin = qgml::spin_matrices(2);
  const std::vector<double> a = interleaved(spin);
  qgml_model* m = nullptr;
  CHECK(qgml_model_create(3, 2, nullptr, QGML_FLOAT64, &m) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()) == "qgml_model_create: matrices is NULL");
  CHECK(m == nullptr);
  CHECK(qgml_model_create(0, 2, a.data(), QGML_FLOAT64, &m) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("d = 0") != std::string::npos);
  CHECK(qgml_model_create(3, 2, a.data(), qgml_dtype(7), &m) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("dtype = 7") != std::string::npos);
  std::vector<double> skew = a;
  skew[2] += 0.5;  // (A_0)_01 no longer the conjugate of (A_0)_10
  CHECK(qgml_model_create(3, 2, skew.data(), QGML_FLOAT64, &m) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("matrix 0 is not Hermitian") != std::string::npos);
  REQUIRE_OK(qgml_model_create(3, 2, a.data(), QGML_FLOAT64, &m));
  const std::vector<double> x = sphere(4);
  std::vector<double> xbar(12);
  double loss = 0;
  CHECK(qgml_evaluate(m, x.data(), 4, 2, QGML_FLOAT64, 0.0, xbar.data(), nullptr, nullptr, &loss) ==
        QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("d = 2 coordinates, the model D = 3") != std::string::npos);
  CHECK(qgml_evaluate(m, x.data(), 0, 3, QGML_FLOAT64, 0.0, xbar.data(), nullptr, nullptr, &loss) ==
        QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("t = 0") != std::string::npos);
  CHECK(qgml_evaluate(nullptr, x.data(), 4, 3, QGML_FLOAT64, 0.0, xbar.data(), nullptr, nullptr, &loss) ==
        QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()) == "qgml_evaluate: model is NULL");
  CHECK(qgml_evaluate(m, x.data(), 4, 3, QGML_FLOAT64, -1.0, xbar.data(), nullptr, nullptr, &loss) ==
        QGML_ERROR_INVALID_ARGUMENT);
  CHECK(qgml_train(nullptr, nullptr, 0, 0, QGML_FLOAT64, 1, nullptr, nullptr, nullptr) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()) == "qgml_train: out is NULL");
  CHECK(qgml_run_open("/nonexistent/run", nullptr) == QGML_ERROR_INVALID_ARGUMENT);
  qgml_run* r = nullptr;
  CHECK(qgml_run_open("/nonexistent/run", &r) == QGML_ERROR_IO);
  CHECK(std::string(qgml_last_error()).find("is not a directory") != std::string::npos);
  qgml_model* loaded = nullptr;
  CHECK(qgml_model_load("/nonexistent/m.npy", &loaded) == QGML_ERROR_IO);
  CHECK(loaded == nullptr);
  CHECK(qgml_settings_set(nullptr, "model.N", "3") == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()) == "qgml_settings_set: settings is NULL");
  qgml_model_destroy(m);
  qgml_settings_destroy(nullptr);
  qgml_model_destroy(nullptr);
  qgml_run_destroy(nullptr);
}

// The status follows the library's error type, not its wording: a file whose contents a reader refuses
// is QGML_ERROR_IO whatever its message says, and qgml_report_error records a wrapper's own check.
TEST_CASE("C API: a file with the wrong contents is QGML_ERROR_IO; qgml_report_error", "[bindings][c-api]") {
  const fs::path dir = scratch("io-status");
  const std::string real_array = (dir / "real.npy").string();
  const std::vector<double> values = {1.0, 0.0, 0.0, 1.0};
  qgml::write_npy(real_array, qgml::NpyType::float64, {1, 2, 2}, values.data());
  qgml_model* m = nullptr;
  CHECK(qgml_model_load(real_array.c_str(), &m) == QGML_ERROR_IO);
  CHECK(std::string(qgml_last_error()).find("expected a complex128 or complex64 array") != std::string::npos);
  CHECK(m == nullptr);

  const std::string yaml = (dir / "two.yaml").string();
  {
    std::FILE* f = std::fopen(yaml.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("model:\n  N: 3\n---\nmodel:\n  N: 4\n", f);
    std::fclose(f);
  }
  Settings s;
  CHECK(qgml_settings_load(s.s, yaml.c_str()) == QGML_ERROR_IO);
  CHECK(std::string(qgml_last_error()).find("a second YAML document") != std::string::npos);
  CHECK(qgml_settings_load(s.s, "/nonexistent-qgml-dir/c.yaml") == QGML_ERROR_IO);
  CHECK(qgml_settings_set(s.s, "model.N", "many") == QGML_ERROR_INVALID_ARGUMENT);  // not a file

  CHECK(qgml_report_error(QGML_ERROR_INVALID_ARGUMENT, "wrapper: x has the wrong shape") ==
        QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()) == "wrapper: x has the wrong shape");
  CHECK(qgml_report_error(QGML_ERROR_RUNTIME, nullptr) == QGML_ERROR_RUNTIME);
  CHECK(std::string(qgml_last_error()).empty());
  fs::remove_all(dir);
}

TEST_CASE("C API: model create, save and load round trip bit-exactly", "[bindings][c-api]") {
  const qgml::HostMatrices h = qgml::gaussian_hermitian_matrices(3, 4, 0.7, 11);
  const std::vector<double> a = interleaved(h);
  qgml_model* m = nullptr;
  REQUIRE_OK(qgml_model_create(3, 4, a.data(), QGML_FLOAT64, &m));
  const fs::path dir = scratch("model");
  const std::string path = (dir / "m.npy").string();
  REQUIRE_OK(qgml_model_save(m, path.c_str(), QGML_FLOAT64));
  qgml_model* back = nullptr;
  REQUIRE_OK(qgml_model_load(path.c_str(), &back));
  int d = 0, n = 0;
  REQUIRE_OK(qgml_model_shape(back, &d, &n));
  CHECK(d == 3);
  CHECK(n == 4);
  std::vector<double> out(a.size());
  REQUIRE_OK(qgml_model_matrices(back, out.data(), QGML_FLOAT64));
  CHECK(same_bits(out, a));
  CHECK(qgml::load_matrices(path).values == h.values);  // the program's reader sees the same file
  // float32: the same numbers rounded once.
  std::vector<float> af(a.begin(), a.end()), outf(a.size());
  qgml_model* mf = nullptr;
  REQUIRE_OK(qgml_model_create(3, 4, af.data(), QGML_FLOAT32, &mf));
  REQUIRE_OK(qgml_model_save(mf, path.c_str(), QGML_FLOAT32));
  qgml_model* backf = nullptr;
  REQUIRE_OK(qgml_model_load(path.c_str(), &backf));
  REQUIRE_OK(qgml_model_matrices(backf, outf.data(), QGML_FLOAT32));
  CHECK(std::memcmp(outf.data(), af.data(), af.size() * sizeof(float)) == 0);
  CHECK(qgml_model_save(m, (dir / "m.txt").c_str(), QGML_FLOAT64) == QGML_ERROR_INVALID_ARGUMENT);
  for (qgml_model* p : {m, back, mf, backf}) qgml_model_destroy(p);
  fs::remove_all(dir);
}

TEST_CASE("C API: qgml_evaluate equals qgml::evaluate to the last bit", "[bindings][c-api]") {
  using Exec = Kokkos::DefaultExecutionSpace;
  const Exec exec;
  const qgml::HostMatrices h = qgml::gaussian_hermitian_matrices(3, 4, 0.7, 5);
  const int t = 257;
  const std::vector<double> x = sphere(t);
  qgml_model* m = nullptr;
  REQUIRE_OK(qgml_model_create(3, 4, interleaved(h).data(), QGML_FLOAT64, &m));
  std::vector<double> xbar(std::size_t(t) * 3), sigma2(t), energy(t);
  double loss = 0;
  REQUIRE_OK(qgml_evaluate(m, x.data(), t, 3, QGML_FLOAT64, 0.25, xbar.data(), sigma2.data(), energy.data(), &loss));
  const auto config = qgml::to_configuration<double>(h, exec);
  qgml::RealMatrix<double, Exec::memory_space> points("points", t, 3);
  auto ph = Kokkos::create_mirror_view(points);
  for (int i = 0; i < t; ++i)
    for (int k = 0; k < 3; ++k) ph(i, k) = x[3 * i + k];
  Kokkos::deep_copy(points, ph);
  qgml::LossSettings settings;
  settings.w = 0.25;
  const auto e = qgml::evaluate(exec, config, points, settings);
  auto xb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.xbar);
  auto s2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.sigma2);
  auto e0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.energy);
  CHECK(std::memcmp(&loss, &e.loss, sizeof loss) == 0);
  CHECK(std::memcmp(xbar.data(), xb.data(), xbar.size() * sizeof(double)) == 0);
  CHECK(std::memcmp(sigma2.data(), s2.data(), sigma2.size() * sizeof(double)) == 0);
  CHECK(std::memcmp(energy.data(), e0.data(), energy.size() * sizeof(double)) == 0);
  // float32 points run the float instantiation: the same numbers to float accuracy.
  std::vector<float> xf(x.begin(), x.end()), xbarf(xbar.size());
  double lossf = 0;
  REQUIRE_OK(qgml_evaluate(m, xf.data(), t, 3, QGML_FLOAT32, 0.25, xbarf.data(), nullptr, nullptr, &lossf));
  CHECK(std::abs(lossf - loss) <= 1e-5 * std::abs(loss));
  for (std::size_t i = 0; i < xbar.size(); ++i) CHECK(std::abs(double(xbarf[i]) - xbar[i]) <= 1e-5);
  qgml_model_destroy(m);
}

// The fuzzy sphere (docs/math.md 7) with A_k = J_k (spin j, N = 2j + 1) at |x| = 1: quantum metric eigenvalues
// {0, j, j}; the intrinsic dimension is 2 at every point.
TEST_CASE("C API: quantum metric and dimension of the fuzzy sphere", "[bindings][c-api]") {
  const int n = 3, t = 40;
  const double j = 0.5 * (n - 1);
  qgml_model* m = nullptr;
  REQUIRE_OK(qgml_model_create(3, n, interleaved(qgml::spin_matrices(n)).data(), QGML_FLOAT64, &m));
  const std::vector<double> x = sphere(t);
  std::vector<double> metric(std::size_t(t) * 9), ev(std::size_t(t) * 3);
  REQUIRE_OK(qgml_quantum_metric(m, x.data(), t, 3, QGML_FLOAT64, metric.data(), ev.data()));
  for (int p = 0; p < t; ++p) {
    CHECK(std::abs(ev[3 * p]) <= 1e-10);
    CHECK(std::abs(ev[3 * p + 1] - j) <= 1e-10);
    CHECK(std::abs(ev[3 * p + 2] - j) <= 1e-10);
    // g = j (1 - x x^T) at |x| = 1: the projector onto the tangent plane, times j.
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        CHECK(std::abs(metric[9 * p + 3 * a + b] - j * ((a == b ? 1.0 : 0.0) - x[3 * p + a] * x[3 * p + b])) <= 1e-10);
  }
  int dimension = -1, uncertain = -1;
  std::vector<int> per_point(t, -1);
  REQUIRE_OK(qgml_dimension(m, nullptr, x.data(), t, 3, QGML_FLOAT64, &dimension, per_point.data(), &uncertain));
  CHECK(dimension == 2);
  CHECK(uncertain == 0);
  CHECK(per_point == std::vector<int>(t, 2));
  std::vector<float> xf(x.begin(), x.end());
  dimension = -1;
  REQUIRE_OK(qgml_dimension(m, nullptr, xf.data(), t, 3, QGML_FLOAT32, &dimension, nullptr, nullptr));
  CHECK(dimension == 2);
  // Every point reads 2 under every neighbouring gap rule: no spread.
  double error = -1;
  int low = -1, high = -1;
  dimension = -1;
  REQUIRE_OK(qgml_dimension_error(m, nullptr, x.data(), t, 3, QGML_FLOAT64, &dimension, &error, &low, &high));
  CHECK(dimension == 2);
  CHECK(error == 0);
  CHECK(low == 2);
  CHECK(high == 2);
  CHECK(qgml_dimension_error(m, nullptr, nullptr, t, 3, QGML_FLOAT64, &dimension, &error, &low, &high) ==
        QGML_ERROR_INVALID_ARGUMENT);
  qgml_model_destroy(m);
}

TEST_CASE("C API: training on points in memory gives the history of the same points through data.file",
          "[bindings][c-api][c-api-train]") {
  const fs::path dir = scratch("train");
  const int t = 300;
  const std::vector<double> x = sphere(t);
  const std::string npy = (dir / "points.npy").string();
  qgml::write_npy(npy, qgml::NpyType::float64, {std::size_t(t), 3}, x.data());

  Settings from_memory;
  short_training(from_memory, dir / "memory", 6);
  qgml_run* a = nullptr;
  REQUIRE_OK(qgml_train(from_memory.s, x.data(), t, 3, QGML_FLOAT64, 1, nullptr, nullptr, &a));

  Settings from_file;
  short_training(from_file, dir / "file", 6);
  from_file.set("data.file", npy);
  qgml_run* b = nullptr;
  REQUIRE_OK(qgml_train(from_file.s, nullptr, 0, 0, QGML_FLOAT64, 1, nullptr, nullptr, &b));

  const std::vector<double> ha = history(a), hb = history(b);
  CHECK(ha.size() == 6);
  CHECK(same_bits(ha, hb));
  CHECK(same_bits(matrices(a), matrices(b)));

  char path[4096];
  REQUIRE_OK(qgml_run_directory(a, path, sizeof path, nullptr));
  qgml_run* opened = nullptr;
  REQUIRE_OK(qgml_run_open(path, &opened));
  CHECK(same_bits(history(opened), ha));
  CHECK(same_bits(matrices(opened), matrices(a)));
  int dimension = -1, uncertain = -1;
  CHECK(qgml_run_dimension(opened, &dimension, &uncertain) == QGML_OK);
  CHECK(dimension >= 0);
  for (qgml_run* r : {a, b, opened}) qgml_run_destroy(r);

  // Points in memory and data.file together are refused before any run directory is made.
  qgml_run* c = nullptr;
  CHECK(qgml_train(from_file.s, x.data(), t, 3, QGML_FLOAT64, 1, nullptr, nullptr, &c) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("are both given") != std::string::npos);
  CHECK(c == nullptr);
  fs::remove_all(dir);
}

namespace {
struct StopAfter {
  int batches = 0, limit = 0;
};
int stop_after(void* user_data) {
  auto* s = static_cast<StopAfter*>(user_data);
  return ++s->batches > s->limit ? 1 : 0;
}
}  // namespace

TEST_CASE("C API: a stop callback interrupts training and qgml_resume reaches the uninterrupted run",
          "[bindings][c-api][c-api-train]") {
  const fs::path dir = scratch("resume");
  const int t = 300, epochs = 5;
  const std::vector<double> x = sphere(t);

  Settings whole;
  short_training(whole, dir / "whole", epochs);
  whole.set("analysis.enabled", "false");
  qgml_run* full = nullptr;
  REQUIRE_OK(qgml_train(whole.s, x.data(), t, 3, QGML_FLOAT64, 1, nullptr, nullptr, &full));

  Settings parts;
  short_training(parts, dir / "parts", epochs);
  parts.set("analysis.enabled", "false");
  StopAfter stop{0, 13};  // 6 batches per epoch: stops in epoch 3
  qgml_run* cut = nullptr;
  REQUIRE(qgml_train(parts.s, x.data(), t, 3, QGML_FLOAT64, 1, stop_after, &stop, &cut) == QGML_ERROR_INTERRUPTED);
  CHECK(std::string(qgml_last_error()).find("qgml_resume") != std::string::npos);
  REQUIRE(cut != nullptr);
  const std::vector<double> partial = history(cut);
  CHECK(partial.size() >= 1);
  CHECK(partial.size() < std::size_t(epochs));
  char path[4096];
  REQUIRE_OK(qgml_run_directory(cut, path, sizeof path, nullptr));
  qgml_run* resumed = nullptr;
  REQUIRE_OK(qgml_resume(path, x.data(), t, 3, QGML_FLOAT64, 1, nullptr, nullptr, &resumed));
  CHECK(same_bits(history(resumed), history(full)));
  CHECK(same_bits(matrices(resumed), matrices(full)));
  int dimension = 0;
  CHECK(qgml_run_dimension(resumed, &dimension, nullptr) == QGML_ERROR_IO);  // analysis.enabled = false
  CHECK(qgml_run_dimension_error(resumed, nullptr, nullptr, nullptr) == QGML_ERROR_IO);
  for (qgml_run* r : {full, cut, resumed}) qgml_run_destroy(r);
  fs::remove_all(dir);
}

TEST_CASE("C API: a trained sphere has intrinsic dimension 2", "[bindings][c-api][c-api-train]") {
  const fs::path dir = scratch("sphere");
  const int t = 500;
  const std::vector<double> x = sphere(t);
  Settings s;
  short_training(s, dir, 40);
  s.set("training.batch_size", "100");
  qgml_run* r = nullptr;
  REQUIRE_OK(qgml_train(s.s, x.data(), t, 3, QGML_FLOAT64, 1, nullptr, nullptr, &r));
  int dimension = -1, uncertain = -1;
  REQUIRE_OK(qgml_run_dimension(r, &dimension, &uncertain));
  CHECK(dimension == 2);
  double error = -1;
  int low = -1, high = -1;
  REQUIRE_OK(qgml_run_dimension_error(r, &error, &low, &high));
  CHECK(error >= 0);
  CHECK(low <= dimension);
  CHECK(high >= dimension);
  qgml_model* m = nullptr;
  REQUIRE_OK(qgml_run_model(r, &m));
  int again = -1;
  REQUIRE_OK(qgml_dimension(m, s.s, x.data(), t, 3, QGML_FLOAT64, &again, nullptr, nullptr));
  CHECK(again == dimension);
  qgml_model_destroy(m);
  qgml_run_destroy(r);
  fs::remove_all(dir);
}

TEST_CASE("C API: a destroyed handle is refused, never read: second destroy, use after destroy, wrong type",
          "[bindings][c-api][security]") {
  qgml_model* m = nullptr;
  REQUIRE_OK(qgml_model_create(3, 2, interleaved(qgml::spin_matrices(2)).data(), QGML_FLOAT64, &m));
  REQUIRE_OK(qgml_model_destroy(m));
  CHECK(qgml_model_destroy(m) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("qgml_model_destroy: model is not a live qgml_model") == 0);
  int d = 0, n = 0;
  CHECK(qgml_model_shape(m, &d, &n) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("destroyed already") != std::string::npos);
  const std::vector<double> x = sphere(4);
  double loss = 0;
  CHECK(qgml_evaluate(m, x.data(), 4, 3, QGML_FLOAT64, 0.5, nullptr, nullptr, nullptr, &loss) ==
        QGML_ERROR_INVALID_ARGUMENT);

  qgml_settings* s = nullptr;
  REQUIRE_OK(qgml_settings_create(&s));
  REQUIRE_OK(qgml_settings_destroy(s));
  CHECK(qgml_settings_set(s, "model.N", "4") == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(qgml_settings_destroy(s) == QGML_ERROR_INVALID_ARGUMENT);

  // A handle of another type, and a pointer the library never returned.
  Settings live;
  CHECK(qgml_model_shape(reinterpret_cast<qgml_model*>(live.s), &d, &n) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("is a qgml_settings, not a qgml_model") != std::string::npos);
  int not_a_run = 0;
  CHECK(qgml_run_destroy(reinterpret_cast<qgml_run*>(&not_a_run)) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(qgml_run_destroy(nullptr) == QGML_OK);
}

TEST_CASE("C API: thread counts above QGML_MAX_THREADS are refused", "[bindings][c-api][security]") {
  int started = -1;
  CHECK(qgml_initialize(QGML_MAX_THREADS + 1, &started) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("at most QGML_MAX_THREADS (1024)") != std::string::npos);
  CHECK(qgml_initialize(1000000, nullptr) == QGML_ERROR_INVALID_ARGUMENT);
  REQUIRE_OK(qgml_initialize(QGML_MAX_THREADS, &started));  // Kokkos runs already: accepted, left alone
  CHECK(started == 0);
}

TEST_CASE("C API: a NaN or infinite point is refused by the analyses", "[bindings][c-api][security]") {
  qgml_model* m = nullptr;
  REQUIRE_OK(qgml_model_create(3, 3, interleaved(qgml::spin_matrices(3)).data(), QGML_FLOAT64, &m));
  std::vector<double> x = sphere(5);
  x[3 * 2 + 1] = std::nan("");
  std::vector<double> metric(5 * 9), ev(5 * 3);
  CHECK(qgml_quantum_metric(m, x.data(), 5, 3, QGML_FLOAT64, metric.data(), ev.data()) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()) ==
        "qgml_quantum_metric: point 2, coordinate 1 is NaN: expected finite coordinates");
  x[3 * 2 + 1] = HUGE_VAL;
  int dimension = -1;
  CHECK(qgml_dimension(m, nullptr, x.data(), 5, 3, QGML_FLOAT64, &dimension, nullptr, nullptr) ==
        QGML_ERROR_INVALID_ARGUMENT);
  std::vector<float> xf(x.begin(), x.end());
  double loss = 0;
  CHECK(qgml_evaluate(m, xf.data(), 5, 3, QGML_FLOAT32, 0.5, nullptr, nullptr, nullptr, &loss) ==
        QGML_ERROR_INVALID_ARGUMENT);
  REQUIRE_OK(qgml_model_destroy(m));
}

#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
TEST_CASE("C API: a computing call from another thread is refused with the rule, not a Kokkos abort",
          "[bindings][c-api][security]") {
  qgml_model* m = nullptr;
  REQUIRE_OK(qgml_model_create(3, 3, interleaved(qgml::spin_matrices(3)).data(), QGML_FLOAT64, &m));
  const std::vector<double> x = sphere(5);
  int status = -1;
  std::string message;
  std::thread other([&] {
    double loss = 0;
    status = qgml_evaluate(m, x.data(), 5, 3, QGML_FLOAT64, 0.5, nullptr, nullptr, nullptr, &loss);
    message = qgml_last_error();
  });
  other.join();
  CHECK(status == QGML_ERROR_RUNTIME);
  CHECK(message.find("called from a thread other than the one that initialised Kokkos") != std::string::npos);
  REQUIRE_OK(qgml_model_destroy(m));
}
#endif

TEST_CASE("C API: an analysis whose scratch cannot fit is refused before any work, naming what fits",
          "[bindings][c-api][security]") {
  // D = 1000, N = 4: the packed kernel's scratch per team (8 points' 1000 x 1000 metrics) exceeds what
  // Kokkos' host spaces offer per team; the pre-flight check of qgml train refuses it in the C API too.
  const int d = 1000, n = 4, t = 4;
  std::vector<double> a(std::size_t(2) * d * n * n, 0.0);
  for (int k = 0; k < d; ++k)
    for (int i = 0; i < n; ++i) a[2 * ((std::size_t(k) * n + i) * n + i)] = 0.01 * (k + i);
  qgml_model* m = nullptr;
  REQUIRE_OK(qgml_model_create(d, n, a.data(), QGML_FLOAT64, &m));
  std::vector<double> x(std::size_t(t) * d, 0.0);
  Settings s;
  s.set("analysis.kernel", "packed");
  int dimension = -1;
  const int status = qgml_dimension(m, s.s, x.data(), t, d, QGML_FLOAT64, &dimension, nullptr, nullptr);
  const std::string message = qgml_last_error();
  CHECK(status == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(dimension == -1);
  if (message.find("host execution spaces only") == std::string::npos) {  // a GPU build has no packed kernel
    CHECK(message.find("qgml_dimension: qgml_dimension (analysis.kernel = packed, N = 4, D = 1000, 4 points in "
                       "chunks of 4) needs") == 0);
    CHECK(message.find("of scratch per team, more than the") != std::string::npos);
    CHECK(message.find("refused before any work (set analysis.kernel team or separate") != std::string::npos);
    // qgml_quantum_metric takes the default kernel (packed on CPUs) and has no setting to change it.
    std::vector<double> metric(std::size_t(t) * d * d);
    CHECK(qgml_quantum_metric(m, x.data(), t, d, QGML_FLOAT64, metric.data(), nullptr) == QGML_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(qgml_last_error()).find("qgml_quantum_metric (kernel = packed, N = 4, D = 1000") !=
          std::string::npos);
  }
  // What the message proposes: the team kernel analyses the same points.
  s.set("analysis.kernel", "team");
  REQUIRE_OK(qgml_dimension(m, s.s, x.data(), 2, d, QGML_FLOAT64, &dimension, nullptr, nullptr));
  REQUIRE_OK(qgml_model_destroy(m));
}

TEST_CASE("C API: supervised training on arrays with NaN or inf is refused naming the array, row and column",
          "[bindings][c-api][security]") {
  const fs::path dir = scratch("supervised-nonfinite");
  const int t = 60;
  std::vector<double> x(std::size_t(t) * 3);
  for (int i = 0; i < t; ++i) {
    x[3 * i] = std::cos(0.1 * i);
    x[3 * i + 1] = std::sin(0.1 * i);
    x[3 * i + 2] = i % 2;  // the target column
  }
  for (const char* task : {"regression", "classification"}) {
    for (const int column : {1, 2}) {
      for (const double bad : {std::nan(""), HUGE_VAL, -HUGE_VAL}) {
        std::vector<double> y = x;
        y[std::size_t(3) * 17 + column] = bad;
        Settings s;
        s.set("task", task);
        s.set("model.N", "3");
        s.set("training.epochs", "2");
        s.set("data.standardize", "false");
        s.set("output.directory", (dir / "runs").string());
        s.set("output.plots", "false");
        qgml_run* r = nullptr;
        CHECK(qgml_train(s.s, y.data(), t, 3, QGML_FLOAT64, 1, nullptr, nullptr, &r) == QGML_ERROR_INVALID_ARGUMENT);
        CHECK(r == nullptr);
        const std::string message = qgml_last_error();
        INFO(task << " column " << column << " value " << bad << ": " << message);
        CHECK(message.find(std::string("the ") + (column == 2 ? "targets" : "features") + " have " +
                           (std::isnan(bad) ? "NaN"
                            : bad > 0       ? "inf"
                                            : "-inf") +
                           " at row 17, column " + std::to_string(column)) != std::string::npos);
        CHECK(message.find("data.array 'C array, 60 x 3 float64'") != std::string::npos);
      }
    }
  }
  // Unsupervised, float32: the same check.
  std::vector<float> xf(x.begin(), x.end());
  xf[5] = std::nanf("");
  Settings s;
  s.set("model.N", "3");
  s.set("training.epochs", "2");
  s.set("output.directory", (dir / "runs").string());
  qgml_run* r = nullptr;
  CHECK(qgml_train(s.s, xf.data(), t, 3, QGML_FLOAT32, 1, nullptr, nullptr, &r) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("the features have NaN at row 1, column 2") != std::string::npos);
  CHECK((!fs::exists(dir / "runs") || fs::is_empty(dir / "runs")));
  fs::remove_all(dir);
}

namespace {

// A model with the closed form of docs/supervised.md section 1 for D = 1, N = 2: A_1 = diag(0, 1) puts
// the ground state of H(x) = 1/2 (A_1 - x)^2 on e_0 for x < 1/2 and on e_1 for x > 1/2, so
// <psi_0|B|psi_0> = b0 or b1 for B = diag(b0, b1) (an off-diagonal entry of B does not change it).
qgml_model* step_model(double b0, double b1) {
  const std::vector<double> m = {0,  0, 0,    0,   0,    0,    1,  0,   // A_1 = diag(0, 1)
                                 b0, 0, 0.25, 0.5, 0.25, -0.5, b1, 0};  // B, Hermitian
  qgml_model* out = nullptr;
  REQUIRE_OK(qgml_model_create(2, 2, m.data(), QGML_FLOAT64, &out));
  return out;
}

}  // namespace

TEST_CASE("C API: qgml_predict applies the transform of supervised.json and reads <psi_0|B|psi_0>",
          "[bindings][c-api]") {
  qgml_model* m = step_model(-1.5, 2.0);
  // Model coordinate (x - 10) / 4: the step at x = 12 in the data's units.
  const std::string regression = R"({"task": "regression", "D": 1, "target_column": -1, "feature_mean": [10],
      "feature_scale": [4], "target_mean": 100, "target_scale": 3})";
  const std::vector<double> x = {5, 11.9, 12.1, 40};
  std::vector<double> y(4, -7), out(4, -7);
  std::int64_t failed = -1;
  REQUIRE_OK(qgml_predict(m, regression.c_str(), x.data(), 4, 1, QGML_FLOAT64, y.data(), nullptr, out.data(), &failed));
  CHECK(failed == 0);
  const double expected_output[] = {-1.5, -1.5, 2.0, 2.0};
  for (int t = 0; t < 4; ++t) {
    INFO("point " << t);
    CHECK(std::fabs(out[t] - expected_output[t]) < 1e-14);
    CHECK(std::fabs(y[t] - (100 + 3 * expected_output[t])) < 1e-12);
  }
  // float32 points: the same predictions.
  const std::vector<float> xf(x.begin(), x.end());
  std::vector<double> yf(4);
  REQUIRE_OK(qgml_predict(m, regression.c_str(), xf.data(), 4, 1, QGML_FLOAT32, yf.data(), nullptr, nullptr, nullptr));
  for (int t = 0; t < 4; ++t) CHECK(yf[t] == y[t]);

  const std::string classification = R"({"task": "classification", "D": 1, "target_column": -1,
      "feature_mean": [10], "feature_scale": [4], "negative_class": 3, "positive_class": 7})";
  std::vector<double> label(4), p(4);
  REQUIRE_OK(
      qgml_predict(m, classification.c_str(), x.data(), 4, 1, QGML_FLOAT64, label.data(), p.data(), nullptr, nullptr));
  for (int t = 0; t < 4; ++t) {
    INFO("point " << t);
    const double z = expected_output[t];
    CHECK(std::fabs(p[t] - 1 / (1 + std::exp(-z))) < 1e-14);
    CHECK(label[t] == (z > 0 ? 7 : 3));
  }

  // Refusals name what was wrong.
  CHECK(qgml_predict(m, regression.c_str(), x.data(), 2, 2, QGML_FLOAT64, y.data(), nullptr, nullptr, nullptr) ==
        QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("d = 2 features, the model 1") != std::string::npos);
  CHECK(qgml_predict(m, regression.c_str(), x.data(), 4, 1, QGML_FLOAT64, y.data(), p.data(), nullptr, nullptr) ==
        QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("probability must be NULL for a regression model") != std::string::npos);
  const std::string no_scale = R"({"task": "regression", "D": 1, "target_column": -1, "feature_mean": [10],
      "target_mean": 0, "target_scale": 1})";
  CHECK(qgml_predict(m, no_scale.c_str(), x.data(), 4, 1, QGML_FLOAT64, y.data(), nullptr, nullptr, nullptr) ==
        QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("the field 'feature_scale' is missing") != std::string::npos);
  const std::string zero_scale = R"({"task": "regression", "D": 1, "target_column": -1, "feature_mean": [10],
      "feature_scale": [0], "target_mean": 0, "target_scale": 1})";
  CHECK(qgml_predict(m, zero_scale.c_str(), x.data(), 4, 1, QGML_FLOAT64, y.data(), nullptr, nullptr, nullptr) ==
        QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("feature 0 has mean 10 and scale 0") != std::string::npos);
  const std::vector<double> bad = {1, std::nan("")};
  CHECK(qgml_predict(m, regression.c_str(), bad.data(), 2, 1, QGML_FLOAT64, y.data(), nullptr, nullptr, nullptr) ==
        QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("point 1, coordinate 0 is NaN") != std::string::npos);
  qgml_model* three = nullptr;
  const std::vector<double> m3(3 * 2 * 2 * 2, 0.0);
  REQUIRE_OK(qgml_model_create(3, 2, m3.data(), QGML_FLOAT64, &three));
  CHECK(qgml_predict(three, regression.c_str(), x.data(), 4, 1, QGML_FLOAT64, y.data(), nullptr, nullptr, nullptr) ==
        QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("holds 3 matrices; the model has D = 1 features") != std::string::npos);
  qgml_model_destroy(three);
  qgml_model_destroy(m);
}

TEST_CASE("C API: several target operators: softmax probabilities and two regression outputs in closed form",
          "[bindings][c-api]") {
  // A_1 = diag(0, 1) as in step_model, then B_c = diag(low_c, high_c): <psi_0|B_c|psi_0> = low_c for x below
  // the step, high_c above it.
  const double low[3] = {2.0, -1.0, 0.0}, high[3] = {-1.0, 3.0, 0.5};
  std::vector<double> m = {0, 0, 0, 0, 0, 0, 1, 0};
  for (int c = 0; c < 3; ++c) m.insert(m.end(), {low[c], 0, 0, 0, 0, 0, high[c], 0});
  qgml_model* model = nullptr;
  REQUIRE_OK(qgml_model_create(4, 2, m.data(), QGML_FLOAT64, &model));
  const std::string softmax = R"({"task": "classification", "D": 1, "outputs": 3, "target_columns": [1],
      "feature_mean": [10], "feature_scale": [4], "loss": "softmax", "classes": [5, 6, 9]})";
  int d = 0, outputs = 0, classes = 0;
  REQUIRE_OK(qgml_supervised_shape(softmax.c_str(), &d, &outputs, &classes));
  CHECK((d == 1 && outputs == 3 && classes == 3));
  const std::vector<double> x = {5, 40};
  std::vector<double> label(2), p(6), out(6);
  std::int64_t failed = -1;
  REQUIRE_OK(
      qgml_predict(model, softmax.c_str(), x.data(), 2, 1, QGML_FLOAT64, label.data(), p.data(), out.data(), &failed));
  CHECK(failed == 0);
  for (int t = 0; t < 2; ++t) {
    const double* z = t == 0 ? low : high;
    const double sum = std::exp(z[0]) + std::exp(z[1]) + std::exp(z[2]);
    for (int c = 0; c < 3; ++c) {
      INFO("point " << t << ", class " << c);
      CHECK(std::fabs(out[std::size_t(3 * t + c)] - z[c]) < 1e-14);
      CHECK(std::fabs(p[std::size_t(3 * t + c)] - std::exp(z[c]) / sum) < 1e-14);
    }
  }
  CHECK(label[0] == 5);  // the largest logit: class 0 below the step
  CHECK(label[1] == 6);  // class 1 above it
  // Two regression outputs of B_1, B_2, each in its own units.
  const std::string two = R"({"task": "regression", "D": 1, "outputs": 2, "target_columns": [1, 2],
      "feature_mean": [10], "feature_scale": [4], "target_mean": [100, -1], "target_scale": [3, 0.5]})";
  qgml_model* model2 = nullptr;
  REQUIRE_OK(qgml_model_create(3, 2, m.data(), QGML_FLOAT64, &model2));
  REQUIRE_OK(qgml_supervised_shape(two.c_str(), &d, &outputs, &classes));
  CHECK((d == 1 && outputs == 2 && classes == 0));
  std::vector<double> y(4);
  REQUIRE_OK(qgml_predict(model2, two.c_str(), x.data(), 2, 1, QGML_FLOAT64, y.data(), nullptr, nullptr, nullptr));
  CHECK(std::fabs(y[0] - (100 + 3 * low[0])) < 1e-12);
  CHECK(std::fabs(y[1] - (-1 + 0.5 * low[1])) < 1e-12);
  CHECK(std::fabs(y[2] - (100 + 3 * high[0])) < 1e-12);
  CHECK(std::fabs(y[3] - (-1 + 0.5 * high[1])) < 1e-12);
  // A model whose operator count disagrees with outputs, and a supervised.json whose fields disagree.
  CHECK(qgml_predict(model, two.c_str(), x.data(), 2, 1, QGML_FLOAT64, y.data(), nullptr, nullptr, nullptr) ==
        QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("holds 4 matrices; the model has D = 1 features and 2 target") !=
        std::string::npos);
  const std::string short_means = R"({"task": "regression", "D": 1, "outputs": 2, "feature_mean": [10],
      "feature_scale": [4], "target_column": -1, "target_mean": [100], "target_scale": [3, 0.5]})";
  CHECK(qgml_supervised_shape(short_means.c_str(), nullptr, nullptr, nullptr) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("the field 'target_mean' is not a list of 2 numbers") != std::string::npos);
  const std::string unsorted = R"({"task": "classification", "D": 1, "outputs": 3, "target_column": -1,
      "feature_mean": [10], "feature_scale": [4], "loss": "softmax", "classes": [5, 9, 6]})";
  CHECK(qgml_supervised_shape(unsorted.c_str(), nullptr, nullptr, nullptr) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("'classes' is not a list of two or more distinct class values") !=
        std::string::npos);
  qgml_model_destroy(model2);
  qgml_model_destroy(model);
}

TEST_CASE("C API: qgml_run_predict of a trained run equals qgml predict's output", "[bindings][c-api][c-api-train]") {
  const fs::path dir = scratch("run-predict");
  const int t = 120;
  for (const char* task : {"regression", "classification"}) {
    std::vector<double> x(std::size_t(t) * 3);
    for (int i = 0; i < t; ++i) {
      const double u = -1.5 + 3.0 * i / (t - 1), v = std::sin(7.0 * i);
      const double f = std::sin(u) + 0.5 * u * v;
      x[3 * i] = u;
      x[3 * i + 1] = 20 + 5 * v;  // standardised by the run
      x[3 * i + 2] = std::string(task) == "regression" ? 50 + 10 * f : (f > 0 ? 4 : -2);
    }
    Settings s;
    s.set("task", task);
    s.set("model.N", "4");
    s.set("training.epochs", "15");
    s.set("training.batch_size", "40");
    s.set("training.lr", "0.05");
    s.set("output.directory", (dir / task).string());
    s.set("output.plots", "false");
    qgml_run* r = nullptr;
    REQUIRE_OK(qgml_train(s.s, x.data(), t, 3, QGML_FLOAT64, 1, nullptr, nullptr, &r));
    char buf[4096];
    size_t needed = 0;
    REQUIRE_OK(qgml_run_directory(r, buf, sizeof buf, &needed));
    const std::string run_dir = buf;
    // The features alone, T x 2.
    std::vector<double> features(std::size_t(t) * 2);
    std::string csv;
    for (int i = 0; i < t; ++i) {
      features[2 * i] = x[3 * i];
      features[2 * i + 1] = x[3 * i + 1];
      char line[128];
      std::snprintf(line, sizeof line, "%.17g,%.17g\n", x[3 * i], x[3 * i + 1]);
      csv += line;
    }
    const bool classification = std::string(task) == "classification";
    std::vector<double> y(t), p(t);
    std::int64_t failed = -1;
    REQUIRE_OK(qgml_run_predict(r, features.data(), t, 2, QGML_FLOAT64, y.data(), classification ? p.data() : nullptr,
                                nullptr, &failed));
    CHECK(failed == 0);
    // The program on the same points, through a CSV file.
    const fs::path data = dir / (std::string(task) + "-points.csv"), out = dir / (std::string(task) + "-out.csv");
    std::ofstream(data) << csv;
    REQUIRE(qgml::app::predict_command(
                {"--run", run_dir, "--data", data.string(), "--output", out.string(), "--quiet"}) == 0);
    const qgml::HostData rows = qgml::read_points(out.string());  // its header line is skipped
    REQUIRE(rows.rows == t);
    int correct = 0;
    for (int i = 0; i < t; ++i) {
      INFO(task << " point " << i);
      if (classification) {
        CHECK(rows(i, 0) == p[i]);  // 17 digits: the same double
        CHECK(rows(i, 1) == y[i]);
        CHECK((y[i] == 4 || y[i] == -2));
        correct += y[i] == x[3 * i + 2] ? 1 : 0;
      } else {
        CHECK(rows(i, 0) == y[i]);
        correct += std::fabs(y[i] - x[3 * i + 2]) < 5 ? 1 : 0;
      }
    }
    // Learned, not constant: most training points predicted (labels right, or within half the target's scale).
    CHECK(correct > t * 3 / 4);
    qgml_run_destroy(r);
  }
  // An unsupervised run has no supervised.json: QGML_ERROR_IO naming it.
  {
    Settings s;
    short_training(s, dir / "unsupervised", 2);
    const std::vector<double> points = sphere(40);
    qgml_run* r = nullptr;
    REQUIRE_OK(qgml_train(s.s, points.data(), 40, 3, QGML_FLOAT64, 1, nullptr, nullptr, &r));
    std::vector<double> y(40);
    CHECK(qgml_run_predict(r, points.data(), 40, 3, QGML_FLOAT64, y.data(), nullptr, nullptr, nullptr) ==
          QGML_ERROR_IO);
    CHECK(std::string(qgml_last_error()).find("supervised.json' cannot be opened") != std::string::npos);
    qgml_run_destroy(r);
  }
  fs::remove_all(dir);
}

TEST_CASE("C API: qgml_sample equals qgml sample, resumes exactly and refuses bad options before drawing",
          "[bindings][c-api][c-api-train]") {
  const fs::path dir = scratch("sample");
  Settings s;
  short_training(s, dir / "runs", 3);
  const std::vector<double> points = sphere(60);
  qgml_run* r = nullptr;
  REQUIRE_OK(qgml_train(s.s, points.data(), 60, 3, QGML_FLOAT64, 1, nullptr, nullptr, &r));
  char run_dir[4096];
  size_t needed = 0;
  REQUIRE_OK(qgml_run_directory(r, run_dir, sizeof run_dir, &needed));
  qgml_run_destroy(r);

  const std::string out = (dir / "c-api").string();
  const char* keys[] = {"chains", "steps", "warmup", "seed", "out"};
  const char* values[] = {"6", "30", "10", "5", out.c_str()};
  std::vector<char> path(out.size() + 1);
  REQUIRE_OK(qgml_sample(run_dir, keys, values, 5, 1, path.data(), path.size(), &needed));
  CHECK(std::string(path.data()) == out);
  CHECK(needed == out.size() + 1);
  // The program with the same options: the same draws, byte for byte.
  const fs::path program = dir / "program";
  REQUIRE(qgml::app::sample_command({run_dir, "--chains", "6", "--steps", "30", "--warmup", "10", "--seed", "5",
                                     "--out", program.string(), "--quiet"}) == 0);
  const std::string draws = qgml::test::read_bytes(fs::path(out) / "samples.npy");
  CHECK(draws.size() > 6 * 3 * 8);
  CHECK(draws == qgml::test::read_bytes(program / "samples.npy"));
  CHECK(qgml::test::read_bytes(fs::path(out) / "acceptance.npy") == qgml::test::read_bytes(program / "acceptance.npy"));

  // 15 steps, then qgml_sample_resume to 30: the draws of the 30-step sampling.
  const std::string half = (dir / "half").string();
  const char* half_values[] = {"6", "15", "10", "5", half.c_str()};
  REQUIRE_OK(qgml_sample(run_dir, keys, half_values, 5, 1, nullptr, 0, nullptr));
  REQUIRE_OK(qgml_sample_resume(half.c_str(), 30, 1));
  CHECK(qgml::test::read_bytes(fs::path(half) / "samples.npy") == draws);

  // Refusals: a reserved or malformed key, an unknown option (the program's message), a buffer too small
  // for the directory's path (before any draw: nothing is created).
  const char* resume_key[] = {"resume"};
  const char* any[] = {"x"};
  CHECK(qgml_sample(run_dir, resume_key, any, 1, 1, nullptr, 0, nullptr) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("resume: qgml_sample_resume") != std::string::npos);
  const char* dashed[] = {"--chains"};
  CHECK(qgml_sample(run_dir, dashed, any, 1, 1, nullptr, 0, nullptr) == QGML_ERROR_INVALID_ARGUMENT);
  const char* bogus[] = {"bogus"};
  CHECK(qgml_sample(run_dir, bogus, any, 1, 1, nullptr, 0, nullptr) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("unknown option --bogus") != std::string::npos);
  const std::string small = (dir / "small").string();
  const char* small_values[] = {"6", "30", "10", "5", small.c_str()};
  char tiny[8];
  CHECK(qgml_sample(run_dir, keys, small_values, 5, 1, tiny, sizeof tiny, &needed) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("buf has 8 bytes") != std::string::npos);
  CHECK(!fs::exists(small));
  const char* bad_steps[] = {"6", "-3", "10", "5", small.c_str()};
  CHECK(qgml_sample(run_dir, keys, bad_steps, 5, 1, nullptr, 0, nullptr) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("--steps = '-3'") != std::string::npos);
  CHECK(qgml_sample_resume((dir / "nowhere").string().c_str(), 0, 1) == QGML_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(qgml_last_error()).find("not a qgml sample directory") != std::string::npos);
  fs::remove_all(dir);
}
