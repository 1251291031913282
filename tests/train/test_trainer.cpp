#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <unistd.h>

#include "qgml/common/file_error.hpp"
#include "qgml/data/datasets.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/model/observables.hpp"
#include "qgml/train/checkpoint.hpp"
#include "qgml/train/trainer.hpp"

#include "temp_dir.hpp"
#include "test_support.hpp"
#include "train/training_fixtures.hpp"

using namespace qgml;
using namespace qgml::test;
namespace fs = std::filesystem;

namespace {

template <class Real, class Space>
std::vector<EpochRecord> train_sphere(int epochs, HostMatrices* final_matrices = nullptr) {
  const Space exec;
  const auto run = train_sphere_run<Real>(exec, epochs);
  if (final_matrices) *final_matrices = to_host(run.config, exec);
  return run.history;
}

// One training session on the sphere points: a 3 x 3 configuration and its trainer. A fresh session
// starts from the seed-1 configuration; a resumed one from a seed-999 configuration that the checkpoint
// in `resume_dir` overwrites.
template <class Real, class Space>
struct Session {
  MatrixConfiguration<Real, Space> config;
  Trainer<Real, Space> trainer;
  Session(const Space& exec, const typename Trainer<Real, Space>::points_type& data, const TrainingSettings& s)
      : config(qr_configuration<Real>(3, 3, 1, exec)), trainer(config, data, s, exec) {}
  Session(const Space& exec, const typename Trainer<Real, Space>::points_type& data, const TrainingSettings& s,
          const std::string& resume_dir)
      : config(qr_configuration<Real>(3, 3, 999, exec)), trainer(config, data, s, exec) {
    trainer.load_checkpoint(resume_dir);
  }
};

// Whether two sets of matrices are byte for byte the same.
bool identical(const HostMatrices& a, const HostMatrices& b) {
  return a.values.size() == b.values.size() &&
         std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(cplx)) == 0;
}

}  // namespace

TEMPLATE_TEST_CASE("end to end: the unit sphere trains to the spin-1 fuzzy sphere (docs/math.md 7, A.1)", "[training]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const auto run = train_sphere_run<Real>(exec, 100);
  const auto& [data, config, history] = run;
  REQUIRE(history.size() == 100);
  CHECK(history.front().batches == 5);
  const EpochRecord& last = history.back();
  INFO("final loss " << last.total << ", reconstruction " << last.reconstruction << ", fluctuation "
                     << last.fluctuation);
  CHECK(std::abs(last.total - 0.200) <= 0.005);
  CHECK(last.skipped_batches == 0);
  CHECK(hermiticity_error(config, exec) == Real(0));
  // Mean |xbar| over the data.
  const int count = 2500;
  qgml::MatrixStack<Real, typename Space::memory_space> h("H", count, 3, 3), v("V", count, 3, 3);
  qgml::RealMatrix<Real, typename Space::memory_space> w("w", count, 3);
  qgml::IntVector<typename Space::memory_space> info("info", count);
  GroundStateObservables<Real, typename Space::memory_space> obs(count, 3);
  build_hamiltonians(exec, config, data, h);
  batched_eigh(exec, h, w, v, info);
  compute_ground_state_observables(exec, config, data, w, v, obs);
  auto xbar = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obs.xbar);
  double mean = 0;
  for (int t = 0; t < count; ++t)
    mean +=
        std::sqrt(double(xbar(t, 0)) * xbar(t, 0) + double(xbar(t, 1)) * xbar(t, 1) + double(xbar(t, 2)) * xbar(t, 2));
  mean /= count;
  INFO("mean |xbar| = " << mean);
  CHECK(std::abs(mean - 0.800) <= 0.01);
}

#if defined(KOKKOS_ENABLE_SERIAL) && defined(KOKKOS_ENABLE_OPENMP)
TEST_CASE("Serial and OpenMP give the same loss history for the same seed", "[training]") {
  const auto serial = train_sphere<double, Kokkos::Serial>(20);
  const auto openmp = train_sphere<double, Kokkos::OpenMP>(20);
  REQUIRE(serial.size() == openmp.size());
  for (std::size_t e = 0; e < serial.size(); ++e) {
    INFO("epoch " << e + 1);
    CHECK(std::abs(serial[e].total - openmp[e].total) <= 1e-10 * std::abs(serial[e].total));
    CHECK(std::abs(serial[e].reconstruction - openmp[e].reconstruction) <= 1e-10 * std::abs(serial[e].reconstruction));
  }
}
#endif

// Data kept in host memory the device can read (pinned memory on CUDA): batches are streamed by the
// gather kernel; results are those of device-resident data.
TEMPLATE_TEST_CASE("data in host-side memory train exactly like device-resident data", "[training]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using HostSide = host_readable_space_t<Space>;
  const Space exec;
  HostMatrices resident;
  const auto full = train_sphere<Real, Space>(4, &resident);
  const auto device_data = sphere_points<Real>(exec, 2500, 3, 0.0, 42);
  Kokkos::View<Real**, Kokkos::LayoutRight, HostSide> host_data("host_data", 2500, 3);
  Kokkos::deep_copy(host_data, device_data);
  auto config = qr_configuration<Real>(3, 3, 1, exec);
  Trainer<Real, Space, HostSide> streamed(config, host_data, sphere_settings(4), exec);
  static_assert(std::is_same_v<typename decltype(streamed)::data_space, HostSide>);
  const auto history = streamed.train();
  REQUIRE(history.size() == 4);
  for (int e = 0; e < 4; ++e) CHECK(history[e].total == full[e].total);
  CHECK(identical(to_host(config, exec), resident));
}

// Warm-started eigensolves (the previous epoch's eigenvectors as the Jacobi starting basis): the same
// training to rounding, cold solves in the first epoch only, and few sweeps afterwards.
TEMPLATE_TEST_CASE("warm-started eigensolves train like cold ones in a few Jacobi sweeps", "[training]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const auto data = sphere_points<Real>(exec, 1000, 3, 0.0, 42);
  auto cold_config = qr_configuration<Real>(3, 4, 1, exec);
  auto warm_config = qr_configuration<Real>(3, 4, 1, exec);
  TrainingSettings s = sphere_settings(8);
  s.batch_size = 250;
  const auto cold = Trainer<Real, Space>(cold_config, data, s, exec).train();
  s.warm_start_eigh = true;
  const auto warm = Trainer<Real, Space>(warm_config, data, s, exec).train();
  REQUIRE(warm.size() == cold.size());
  const double tol = std::is_same_v<Real, double> ? 1e-9 : 2e-3;
  for (std::size_t e = 0; e < cold.size(); ++e) {
    INFO("epoch " << e + 1 << ": " << warm[e].eigh_sweeps << " sweeps");
    CHECK(std::abs(warm[e].total - cold[e].total) <= tol * std::abs(cold[e].total));
    CHECK(warm[e].eigh_failures == 0);
    CHECK(cold[e].eigh_sweeps == 0);
    if (e == 0) {
      CHECK(warm[e].eigh_sweeps == 0);  // no basis yet: cold
    } else {
      CHECK(warm[e].eigh_sweeps >= 1);
      CHECK(warm[e].eigh_sweeps <= 8);
    }
  }
}

TEMPLATE_TEST_CASE("resuming from a checkpoint continues bit-identically", "[training]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  TempDir dir;
  HostMatrices uninterrupted;
  const auto full = train_sphere<Real, Space>(6, &uninterrupted);

  auto data = sphere_points<Real>(exec, 2500, 3, 0.0, 42);
  {
    TrainingSettings s = sphere_settings(6);
    s.checkpoint_dir = dir.path.string();
    s.checkpoint_every = 3;
    Session<Real, Space> first(exec, data, s);
    first.trainer.train([](const EpochRecord& r) { return r.epoch < 3; });  // interrupted after epoch 3
    REQUIRE(first.trainer.epoch() == 3);
  }
  Session<Real, Space> resumed(exec, data, sphere_settings(6), dir.path.string());
  CHECK(resumed.trainer.epoch() == 3);
  const auto history = resumed.trainer.train();
  REQUIRE(history.size() == 6);
  for (int e = 0; e < 6; ++e) CHECK(history[e].total == full[e].total);
  CHECK(identical(to_host(resumed.config, exec), uninterrupted));
}

TEMPLATE_TEST_CASE("a batch with a non-finite loss is skipped and never reaches the matrices", "[training]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  auto data = sphere_points<Real>(exec, 100, 3, 0.0, 1);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), data);
  host(17, 1) = std::numeric_limits<Real>::quiet_NaN();
  Kokkos::deep_copy(data, host);
  auto config = qr_configuration<Real>(3, 3, 1, exec);
  TrainingSettings s;
  s.epochs = 3;
  s.batch_size = 10;
  s.learning_rate = 0.01;
  s.loss.w = 0;
  s.seed = 0;
  Trainer<Real, Space> trainer(config, data, s, exec);
  const auto history = trainer.train();
  for (const auto& r : history) {
    CHECK(r.skipped_batches == 1);
    CHECK(r.batches == 9);
    CHECK(std::isfinite(r.total));
  }
  const HostMatrices m = to_host(config, exec);
  for (auto z : m.values) CHECK((std::isfinite(z.real()) && std::isfinite(z.imag())));
}

TEMPLATE_TEST_CASE("the last partial batch is kept and the learning-rate schedule is applied", "[training]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  auto data = sphere_points<Real>(exec, 1050, 3, 0.1, 3);
  auto config = qr_configuration<Real>(3, 4, 2, exec);
  TrainingSettings s;
  s.epochs = 3;
  s.batch_size = 500;
  s.learning_rate = 0.02;
  s.loss.w = 0;
  s.seed = 0;
  s.schedule.kind = LearningRateSchedule::Kind::exponential;
  s.schedule.gamma = 0.5;
  Trainer<Real, Space> trainer(config, data, s, exec);
  const auto history = trainer.train();
  CHECK(history[0].batches == 3);
  CHECK(history[0].learning_rate == 0.02);
  CHECK(history[2].learning_rate == 0.005);
  CHECK(history[2].total < history[0].total);
}

// One batch per epoch is not shuffled (train/batch_distribution.hpp): the seed, which only orders the
// points, then changes no bit; with several batches it does (so the comparison can tell them apart).
TEMPLATE_TEST_CASE("a full-batch epoch takes the points in their stored order: the shuffle seed changes no bit",
                   "[training]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const auto data = sphere_points<Real>(exec, 333, 3, 0.1, 5);
  const auto run = [&](int batch, std::uint64_t seed) {
    auto config = qr_configuration<Real>(3, 4, 2, exec);
    TrainingSettings s;
    s.epochs = 3;
    s.batch_size = batch;
    s.learning_rate = 0.02;
    s.loss.w = 0.25;
    s.seed = seed;
    Trainer<Real, Space> trainer(config, data, s, exec);
    const auto history = trainer.train();
    REQUIRE(history.size() == 3);
    CHECK(history[0].batches == (batch == 0 || batch >= 333 ? 1 : (333 + batch - 1) / batch));
    return to_host(config, exec);
  };
  CHECK(identical(run(333, 1), run(333, 2)));
  CHECK(identical(run(0, 1), run(5000, 2)));  // 0: the whole data set
  CHECK_FALSE(identical(run(111, 1), run(111, 2)));
}

namespace {

// A small checkpoint state: D = 2 matrices of size 3, Adam moments, two epochs of history.
CheckpointState small_checkpoint() {
  CheckpointState s;
  s.matrices = qr_matrices(2, 3, 11);
  s.adam_m.assign(2 * 3 * 3, 0.25);
  s.adam_v.assign(2 * 3 * 3, 0.5);
  s.adam_step = 14;
  s.epoch = 7;
  s.seed = std::numeric_limits<std::uint64_t>::max();  // the full range of the seed survives
  s.points = 2500;
  for (int e = 1; e <= 7; ++e) {
    EpochRecord r;
    r.epoch = e;
    r.total = 0.1 + 0.2 * e;
    s.history.push_back(r);
  }
  s.fingerprint.data = hex64(0x0123456789abcdefULL);
  s.fingerprint.settings = {{"training.lr", "0.01"}, {"data.file", "/a \"quoted\\ path"}};
  return s;
}

void replace(std::string& text, const std::string& from, const std::string& to) {
  const auto p = text.find(from);
  REQUIRE(p != std::string::npos);
  text.replace(p, from.size(), to);
}

}  // namespace

TEST_CASE("a checkpoint's state.json round-trips; a damaged one is an error naming the file and field",
          "[training][checkpoint]") {
  using Catch::Matchers::ContainsSubstring;
  TempDir dir;
  CheckpointState written = small_checkpoint();
  written.best_epoch = 5;  // supervised training's best epoch (Trainer::best_epoch)
  written.best_validation = 0.25;
  written.best_matrices = written.matrices;
  written.best_matrices.values[0] += 0.5;  // a diagonal entry: still Hermitian
  write_checkpoint(dir.path.string(), written);
  const CheckpointState read = read_checkpoint(dir.path.string());
  CHECK(read.best_epoch == 5);
  CHECK(read.best_validation == 0.25);
  CHECK(read.best_matrices.values == written.best_matrices.values);
  CHECK(read.epoch == written.epoch);
  CHECK(read.adam_step == written.adam_step);
  CHECK(read.seed == written.seed);
  CHECK(read.points == written.points);
  CHECK(read.matrices.values == written.matrices.values);
  REQUIRE(read.history.size() == 7);
  CHECK(read.history[6].total == written.history[6].total);
  CHECK(read.fingerprint.data == written.fingerprint.data);
  CHECK(read.fingerprint.settings == written.fingerprint.settings);

  const fs::path state = dir.path / "epoch-000007" / "state.json";
  const std::string good = read_bytes(state);
  const std::string file = "checkpoint '" + state.string() + "'";
  std::string text = good, expected;
  SECTION("cut short") {
    text = good.substr(0, good.size() / 2);
    expected = "not valid JSON";
  }
  SECTION("empty") {
    expected = "not valid JSON";
    text = "";
  }
  SECTION("not JSON") {
    text = "format = qgml-checkpoint\nepoch = 7\n";
    expected = "not valid JSON";
  }
  SECTION("a number written as text") {
    replace(text, "\"epoch\": 7", "\"epoch\": \"7\"");
    expected = "field \"epoch\" must be an integer in [0, 2147483647], got \"7\"";
  }
  SECTION("a negative epoch") {
    replace(text, "\"epoch\": 7", "\"epoch\": -7");
    expected = "field \"epoch\" must be an integer in [0, 2147483647], got -7";
  }
  SECTION("a fractional step") {
    replace(text, "\"adam_step\": 14", "\"adam_step\": 14.5");
    expected = "field \"adam_step\" must be an integer in [0, 2147483647], got 14.5";
  }
  SECTION("a missing seed") {
    replace(text, "\"seed\"", "\"sead\"");
    expected = "missing field \"seed\"";
  }
  SECTION("another format") {
    replace(text, "\"qgml-checkpoint\"", "\"qgml-matrix-configuration\"");
    expected = "field \"format\" is not \"qgml-checkpoint\" (got \"qgml-matrix-configuration\")";
  }
  SECTION("a newer version") {
    replace(text, "\"version\": 2", "\"version\": 3");
    expected = "unsupported version 3 (this qgml reads version 2)";
  }
  SECTION("a best epoch after the checkpoint's") {
    replace(text, "\"best_epoch\": 5", "\"best_epoch\": 9");
    expected = "field \"best_epoch\" = 9 is after the epoch 7 of the checkpoint";
  }
  SECTION("a best validation loss written as text") {
    replace(text, "\"best_validation\": 0.25", "\"best_validation\": \"0.25\"");
    expected = "field \"best_validation\" must be a number, got \"0.25\"";
  }
  SECTION("an epoch that is not the directory's") {
    replace(text, "\"epoch\": 7", "\"epoch\": 6");
    expected = "epoch 6 but the directory is epoch-000007";
  }
  write_bytes(state, text);
  // The damage is sealed with fresh checksums, so that the reader's own checks are what find it.
  write_bytes(state.parent_path() / "checksums", checkpoint_checksums(state.parent_path().string()));
  CHECK_THROWS_WITH(read_checkpoint(dir.path.string()), ContainsSubstring(file) && ContainsSubstring(expected));
}

TEST_CASE("a checkpoint's files are verified against its checksums before use; LATEST names only its own",
          "[training][checkpoint]") {
  using Catch::Matchers::ContainsSubstring;
  TempDir dir;
  CheckpointState written = small_checkpoint();
  written.warm_basis.D = int(written.points);
  written.warm_basis.N = 3;
  written.warm_basis.values.assign(std::size_t(written.points) * 9, {0.5, -0.25});
  write_checkpoint(dir.path.string(), written);
  const fs::path sub = dir.path / "epoch-000007";
  CHECK(read_checkpoint(dir.path.string()).warm_basis.values == written.warm_basis.values);
  std::string file, expected;
  SECTION("a flipped byte in the Adam state") {
    file = (sub / "adam_m.npy").string();
    std::string bytes = read_bytes(file);
    bytes[bytes.size() - 3] ^= 0x10;
    write_bytes(file, bytes);
    expected = "checksum mismatch";
  }
  SECTION("a missing file") {
    file = (sub / "history.csv").string();
    fs::remove(file);
    expected = "listed in checksums but missing";
  }
  SECTION("a file added") {
    file = (sub / "extra.npy").string();
    write_bytes(file, "x");
    expected = "not listed in checksums";
  }
  SECTION("a checksums line naming a file longer than the file system allows") {
    // Found by fuzz_checkpoint: the name reached std::filesystem, whose error escaped the reader.
    const std::string list = (sub / "checksums").string();
    write_bytes(list, read_bytes(list) + "0123456789abcdef  " + std::string(300, 'x') + "\n");
    file = (sub / std::string(300, 'x')).string();
    expected = "listed in checksums but missing";
  }
  SECTION("no checksums") {
    fs::remove(sub / "checksums");
    file = sub.string();
    expected = "no checksums file";
  }
  SECTION("LATEST outside the checkpoint directory") {
    file = (dir.path / "LATEST").string();
    write_bytes(file, "../other/epoch-000007\n");
    expected = "not an epoch-NNNNNN directory of this checkpoint directory";
  }
  SECTION("LATEST naming an absent checkpoint") {
    file = (dir.path / "LATEST").string();
    write_bytes(file, "epoch-000009\n");
    expected = "does not exist";
  }
  CHECK_THROWS_WITH(read_checkpoint(dir.path.string()), ContainsSubstring(file) && ContainsSubstring(expected));
}

TEST_CASE("a checkpoint path the file system refuses is a FileError that names it", "[training][checkpoint]") {
  using Catch::Matchers::ContainsSubstring;
  TempDir dir;
  const std::string path = (dir.path / std::string(300, 'x')).string();
  CHECK_THROWS_AS(read_checkpoint(path), FileError);
  CHECK_THROWS_WITH(read_checkpoint(path), ContainsSubstring(path) && ContainsSubstring("too long"));
}

TEST_CASE("early stop: the mean loss of a window against the window before", "[training][early-stop]") {
  TrainingSettings s;
  s.early_stop_tolerance = 1e-3;
  s.early_stop_window = 3;
  std::vector<EpochRecord> h;
  auto add = [&](double loss) {
    EpochRecord r;
    r.epoch = int(h.size()) + 1;
    r.total = loss;
    h.push_back(r);
  };
  for (double loss : {1.0, 0.5, 0.3, 0.2, 0.15}) {
    add(loss);
    CHECK_FALSE(early_stop_converged(s, h));  // fewer than 2 W epochs, then a falling loss
  }
  // Noisy but flat: windows {0.1001, 0.0999, 0.1} and {0.15, 0.1001, 0.0999} -> not yet; then flat.
  add(0.1001);
  add(0.0999);
  CHECK_FALSE(early_stop_converged(s, h));
  add(0.1);
  add(0.1);
  add(0.1);
  CHECK_FALSE(early_stop_converged(s, h));  // {0.1, 0.1, 0.1} against {0.15, 0.1001, 0.0999}: 15 % apart
  add(0.1);
  CHECK(early_stop_converged(s, h));  // {0.1, 0.1, 0.1} against {0.1001, 0.0999, 0.1}: equal means
  // A single epoch that jumps does not stop training even though its neighbours agree (W = 1 would).
  std::vector<EpochRecord> jumpy = h;
  h.back().total = 0.2;
  CHECK_FALSE(early_stop_converged(s, h));
  // W = 1 compares consecutive epochs; tolerance 0 never stops; a non-finite mean never converges.
  s.early_stop_window = 1;
  CHECK(early_stop_converged(s, jumpy));
  s.early_stop_tolerance = 0;
  CHECK_FALSE(early_stop_converged(s, jumpy));
  s.early_stop_tolerance = 1e-3;
  jumpy.back().total = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(early_stop_converged(s, jumpy));
}

TEST_CASE("early stop ends training at the plateau, and a resumed run stops at the same epoch",
          "[training][early-stop]") {
  using Real = double;
  using Space = Kokkos::DefaultExecutionSpace;
  const Space exec;
  TempDir dir;
  auto data = sphere_points<Real>(exec, 500, 3, 0.0, 42);
  TrainingSettings s = sphere_settings(400);
  s.early_stop_tolerance = 1e-3;
  s.early_stop_window = 10;
  auto config = qr_configuration<Real>(3, 3, 1, exec);
  Trainer<Real, Space> full(config, data, s, exec);
  const auto history = full.train();
  const int stopped = int(history.size());
  CHECK(stopped < 400);
  CHECK(stopped >= 20);
  CHECK(early_stop_converged(s, history));
  CHECK_FALSE(early_stop_converged(s, std::vector<EpochRecord>(history.begin(), history.end() - 1)));

  // Interrupted halfway and resumed: the restored history decides the same stop.
  s.checkpoint_dir = dir.path.string();
  s.checkpoint_every = 1;
  {
    Session<Real, Space> first(exec, data, s);
    first.trainer.train([&](const EpochRecord& r) { return r.epoch < stopped / 2; });
  }
  Session<Real, Space> resumed(exec, data, s, dir.path.string());
  const auto again = resumed.trainer.train();
  REQUIRE(int(again.size()) == stopped);
  CHECK(again.back().total == history.back().total);
}

TEMPLATE_TEST_CASE("a stop between batches restores the last complete epoch, checkpoints it and resumes exactly",
                   "[training][interrupt]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  TempDir dir;
  HostMatrices uninterrupted;
  const auto full = train_sphere<Real, Space>(4, &uninterrupted);
  auto data = sphere_points<Real>(exec, 2500, 3, 0.0, 42);
  TrainingSettings s = sphere_settings(4);
  s.checkpoint_dir = dir.path.string();
  s.checkpoint_every = 0;  // only epoch 0 and the stop are checkpointed
  HostMatrices after_two;
  {
    Session<Real, Space> first(exec, data, s);
    // Asked once per batch boundary (4 per epoch of 5 batches): stop at the third boundary of epoch 3.
    int asked = 0;
    first.trainer.set_stop_query([&] { return ++asked == 2 * 4 + 3; });
    first.trainer.train();
    REQUIRE(first.trainer.interrupted());
    CHECK(first.trainer.epoch() == 2);
    CHECK(first.trainer.history().size() == 2);
    after_two = to_host(first.config, exec);
  }
  {
    std::ifstream latest(dir.path / "LATEST");
    std::string name;
    std::getline(latest, name);
    CHECK(name == "epoch-000002");
  }
  HostMatrices two_epochs;
  train_sphere<Real, Space>(2, &two_epochs);
  CHECK(identical(after_two, two_epochs));
  Session<Real, Space> resumed(exec, data, s, dir.path.string());
  CHECK(resumed.trainer.epoch() == 2);
  const auto history = resumed.trainer.train();
  REQUIRE(history.size() == 4);
  for (int e = 0; e < 4; ++e) CHECK(history[e].total == full[e].total);
  CHECK(identical(to_host(resumed.config, exec), uninterrupted));
}

// With warm-started eigensolves, the bases stored by the batches of the abandoned epoch come from
// matrices that are rolled back: the bases of the last complete epoch must be restored with them, or
// the continued run differs in the last bits (warm_start_cache.hpp).
TEMPLATE_TEST_CASE("a stop between batches of a warm-started run keeps the last complete epoch's bases",
                   "[training][interrupt][warm-start]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  TempDir dir;
  auto data = sphere_points<Real>(exec, 2500, 3, 0.0, 42);
  TrainingSettings s = sphere_settings(5);
  s.warm_start_eigh = true;
  HostMatrices uninterrupted;
  {
    Session<Real, Space> full(exec, data, s);
    full.trainer.train();
    uninterrupted = to_host(full.config, exec);
  }
  s.checkpoint_dir = dir.path.string();
  s.checkpoint_every = 0;  // only epoch 0 and the stop are checkpointed
  HostMatrices continued;
  {
    Session<Real, Space> first(exec, data, s);
    // Asked once per batch boundary (4 per epoch of 5 batches): stop at the third boundary of epoch 4,
    // after three of its batches have stored new bases.
    int asked = 0;
    first.trainer.set_stop_query([&] { return ++asked == 3 * 4 + 3; });
    first.trainer.train();
    REQUIRE(first.trainer.interrupted());
    CHECK(first.trainer.epoch() == 3);
    CHECK(read_checkpoint(dir.path.string()).warm_basis.D == 2500);
    // The same trainer goes on from its restored state ...
    first.trainer.train();
    CHECK_FALSE(first.trainer.interrupted());
    continued = to_host(first.config, exec);
  }
  CHECK(identical(continued, uninterrupted));
  // ... and so does a run resumed from the checkpoint of the stop (it holds epoch 5 now; read epoch 3).
  Session<Real, Space> resumed(exec, data, s, (dir.path / "epoch-000003").string());
  CHECK(resumed.trainer.epoch() == 3);
  const auto history = resumed.trainer.train();
  REQUIRE(history.size() == 5);
  CHECK(history[3].eigh_sweeps > 0);  // warm from the restored bases
  CHECK(identical(to_host(resumed.config, exec), uninterrupted));
}

TEST_CASE("a fresh run checkpoints epoch 0, and a resume from it equals the uninterrupted run",
          "[training][checkpoint]") {
  using Real = double;
  using Space = Kokkos::DefaultExecutionSpace;
  const Space exec;
  TempDir dir;
  HostMatrices uninterrupted;
  train_sphere<Real, Space>(3, &uninterrupted);
  auto data = sphere_points<Real>(exec, 2500, 3, 0.0, 42);
  TrainingSettings s = sphere_settings(3);
  s.checkpoint_dir = dir.path.string();
  s.checkpoint_every = 0;
  {
    Session<Real, Space> first(exec, data, s);
    first.trainer.set_stop_query([] { return true; });  // stops at the first batch boundary of epoch 1
    first.trainer.train();
    REQUIRE(first.trainer.interrupted());
    CHECK(first.trainer.epoch() == 0);
  }
  const CheckpointState zero = read_checkpoint(dir.path.string());
  CHECK(zero.epoch == 0);
  CHECK(zero.history.empty());
  Session<Real, Space> resumed(exec, data, s, dir.path.string());
  resumed.trainer.train();
  CHECK(identical(to_host(resumed.config, exec), uninterrupted));
}

TEST_CASE("an epoch in which every point fails stops training with a message; the good checkpoint stays",
          "[training][nonfinite]") {
  using Real = double;
  using Space = Kokkos::DefaultExecutionSpace;
  const Space exec;
  TempDir dir;
  auto data = sphere_points<Real>(exec, 100, 3, 0.0, 1);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), data);
  for (int i = 0; i < 100; ++i)
    for (int k = 0; k < 3; ++k) host(i, k) *= 1e155;  // (A - x)^2 overflows
  Kokkos::deep_copy(data, host);
  auto config = qr_configuration<Real>(3, 3, 1, exec);
  TrainingSettings s;
  s.epochs = 3;
  s.batch_size = 10;
  s.learning_rate = 0.01;
  s.loss.w = 0;
  s.seed = 0;
  s.checkpoint_dir = dir.path.string();
  Trainer<Real, Space> trainer(config, data, s, exec);
  CHECK_THROWS_WITH(trainer.train(),
                    Catch::Matchers::ContainsSubstring("epoch 1: the loss is not finite at any point") &&
                        Catch::Matchers::ContainsSubstring("extreme scale"));
  CHECK(read_checkpoint(dir.path.string()).epoch == 0);
}

TEST_CASE("a resume of an early-stopped run trains no further epoch unless more are asked for",
          "[training][early-stop]") {
  using Real = double;
  using Space = Kokkos::DefaultExecutionSpace;
  const Space exec;
  TempDir dir;
  auto data = sphere_points<Real>(exec, 500, 3, 0.0, 42);
  TrainingSettings s = sphere_settings(400);
  s.early_stop_tolerance = 1e-3;
  s.early_stop_window = 10;
  s.checkpoint_dir = dir.path.string();
  Session<Real, Space> full(exec, data, s);
  const int stopped = int(full.trainer.train().size());
  REQUIRE(stopped < 400);
  CHECK(full.trainer.stopped_early());
  {
    Session<Real, Space> resumed(exec, data, s, dir.path.string());
    CHECK(resumed.trainer.already_stopped_early());
    CHECK(int(resumed.trainer.train().size()) == stopped);
    CHECK(read_checkpoint(dir.path.string()).epoch == stopped);
  }
  for (const bool off : {false, true}) {  // more epochs than the limit, or the early stop turned off
    TrainingSettings t = s;
    if (off)
      t.early_stop_tolerance = 0;
    else
      t.epochs = 401;
    Session<Real, Space> again(exec, data, t, dir.path.string());
    CHECK_FALSE(again.trainer.already_stopped_early());
  }
  TrainingSettings more = s;
  more.epochs = 401;
  more.early_stop_tolerance = 0;
  Session<Real, Space> extended(exec, data, more, dir.path.string());
  CHECK_FALSE(extended.trainer.already_stopped_early());
  extended.trainer.train([&](const EpochRecord& r) { return r.epoch < stopped + 2; });
  CHECK(extended.trainer.epoch() == stopped + 2);
}

TEST_CASE("history.csv is read with the strict parsers; a bad field is named with its file, line and column",
          "[training][checkpoint][history]") {
  TempDir dir;
  const std::string path = (dir.path / "history.csv").string();
  EpochRecord r;
  r.epoch = 7;
  r.total = 0.1;
  r.reconstruction = 1.0 / 3;
  r.fluctuation = 2.5e-300;
  r.learning_rate = 4.9406564584124654e-324;  // subnormal: a decayed rate, restored exactly
  r.degenerate_points = 3000000000L;
  r.batches = 5;
  r.seconds = 0;
  r.points_per_second = std::numeric_limits<double>::infinity();
  write_history_csv(path, {r, r});
  const std::vector<EpochRecord> back = read_history_csv(path);
  REQUIRE(back.size() == 2);
  CHECK(back[1].epoch == 7);
  CHECK(back[1].reconstruction == r.reconstruction);
  CHECK(back[1].fluctuation == r.fluctuation);
  CHECK(back[1].learning_rate == r.learning_rate);
  CHECK(back[1].degenerate_points == r.degenerate_points);
  CHECK(back[1].points_per_second == r.points_per_second);

  const std::string header = [&] {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
  }();
  const auto read_line = [&](const std::string& line) {
    std::ofstream(path, std::ios::trunc) << header << "\n1,0.5,0.25,0.25,0,0.01,0,0,0,4,0.1,100\n" << line << "\n";
    try {
      read_history_csv(path);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  using Catch::Matchers::ContainsSubstring;
  CHECK_THAT(read_line("2e2,0.5,0.25,0.25,0,0.01,0,0,0,4,0.1,100"),
             ContainsSubstring("history '" + path + "': line 3, column 1: epoch '2e2' is not an integer"));
  CHECK_THAT(read_line("2,0.5,0.25,0.25,0,0.01,0,0,0,0x3,0.1,100"),
             ContainsSubstring("line 3, column 30: batches '0x3' is not an integer"));
  CHECK_THAT(read_line("2,0.5 ,0.25,0.25,0,0.01,0,0,0,4,0.1,100"),
             ContainsSubstring("line 3, column 3: total '0.5 ' is not a number"));
  CHECK_THAT(read_line("2,0.5,0.25,0.25,0,0x1p-3,0,0,0,4,0.1,100"),
             ContainsSubstring("column 19: learning_rate '0x1p-3' is not a number"));
  CHECK_THAT(read_line("2,0.5,0.25,0.25,0,0.01,1.5,0,0,4,0.1,100"),
             ContainsSubstring("degenerate_points '1.5' is not an integer"));
  CHECK_THAT(read_line("2,0.5,0.25,0.25,0,0.01,0,0,0,99999999999,0.1,100"),
             ContainsSubstring("batches '99999999999' is not an integer"));
  CHECK_THAT(read_line("2,0.5,0.25,0.25,0,0.01,0,0,0,4,0.1,100,"), ContainsSubstring("expected 12 fields, got 13"));
  CHECK(read_line("2,0.5,0.25,0.25,0,0.01,0,0,0,4,0.1,100") == "accepted");
}

TEST_CASE("a checkpoint directory that is a symbolic link is refused; the epochs at its target stay",
          "[training][checkpoint][security]") {
  using Catch::Matchers::ContainsSubstring;
  TempDir dir;
  const fs::path target = dir.path / "elsewhere";
  for (const char* e : {"epoch-000001", "epoch-000002", "epoch-000003"}) fs::create_directories(target / e);
  fs::create_symlink(target, dir.path / "checkpoints");
  CheckpointState s = small_checkpoint();
  REQUIRE_THROWS_WITH(write_checkpoint((dir.path / "checkpoints").string(), s),
                      ContainsSubstring("is a symbolic link"));
  for (const char* e : {"epoch-000001", "epoch-000002", "epoch-000003"}) CHECK(fs::is_directory(target / e));
  CHECK_FALSE(fs::exists(target / "epoch-000007"));
}

TEST_CASE("old epochs are deleted only as directories of the checkpoint directory, never through a link",
          "[training][checkpoint][security]") {
  TempDir dir;
  const fs::path root = dir.path / "checkpoints";
  const fs::path target = dir.path / "elsewhere";
  fs::create_directories(target / "kept");
  fs::create_directories(root);
  fs::create_symlink(target, root / "epoch-000001");
  CheckpointState s = small_checkpoint();
  for (int epoch : {2, 3, 4}) {
    s.epoch = epoch;
    write_checkpoint(root.string(), s);
  }
  CHECK(fs::is_directory(target / "kept"));
  CHECK(fs::is_symlink(fs::symlink_status(root / "epoch-000001")));
}
