// Data-parallel training (trainer.hpp) against the one-process run: the same batches, the same loss
// history to rounding (the only difference is the order of the sums over points), every rank holding
// the same matrices, checkpoints that resume on any number of ranks, and sharded reading of files.
#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "qgml/data/datasets.hpp"
#include "qgml/io/data_io.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/mpi/communicator.hpp"
#include "qgml/train/checkpoint.hpp"
#include "qgml/train/trainer.hpp"

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

template <class Real>
double tolerance() {
  return std::is_same_v<Real, double> ? 1e-10 : 1e-3;
}

double relative(double a, double b) { return std::abs(a - b) / std::max(std::abs(a), 1e-300); }

template <class Real>
void check_same_history(const std::vector<qgml::EpochRecord>& ref, const std::vector<qgml::EpochRecord>& h, int ranks) {
  REQUIRE(h.size() == ref.size());
  for (std::size_t e = 0; e < ref.size(); ++e) {
    INFO("epoch " << e + 1 << ", " << ranks << " ranks");
    CHECK(h[e].batches == ref[e].batches);
    CHECK(h[e].skipped_batches == ref[e].skipped_batches);
    if (ranks == 1) {  // the one-process code path: bit-identical
      CHECK(h[e].total == ref[e].total);
      CHECK(h[e].fluctuation == ref[e].fluctuation);
    } else {
      CHECK(relative(h[e].total, ref[e].total) <= tolerance<Real>());
      CHECK(relative(h[e].reconstruction, ref[e].reconstruction) <= tolerance<Real>());
      CHECK(relative(h[e].fluctuation, ref[e].fluctuation) <= tolerance<Real>());
      CHECK(relative(h[e].penalty + 1, ref[e].penalty + 1) <= tolerance<Real>());
    }
  }
}

template <class Real>
double max_difference(const qgml::MatrixConfiguration<Real, Exec>& a, const qgml::MatrixConfiguration<Real, Exec>& b) {
  const auto ha = qgml::to_host(a, Exec()), hb = qgml::to_host(b, Exec());
  double m = 0;
  for (int k = 0; k < ha.D; ++k)
    for (int i = 0; i < ha.N; ++i)
      for (int j = 0; j < ha.N; ++j) m = std::max(m, std::abs(ha(k, i, j) - hb(k, i, j)));
  return m;
}

}  // namespace

TEMPLATE_TEST_CASE("distributed training reproduces the one-process history", "[mpi]", double, float) {
  using Real = TestType;
  qgml::mpi::Communicator comm;
  const Exec exec;
  struct Case {
    int points, batch, epochs;
    double w, penalty;
  };
  // full batch; mini-batches with a partial last batch; batches smaller than the number of ranks (some
  // ranks hold none of a batch's points); the commutator penalty (added once, after the all-reduce).
  for (const Case c : {Case{2500, 0, 12, 0.25, 0}, Case{1001, 96, 8, 0.25, 0}, Case{203, 2, 2, 0.0, 0},
                       Case{1001, 250, 6, 0.5, 0.01}}) {
    INFO("T = " << c.points << ", batch " << c.batch << ", " << comm.size() << " ranks");
    qgml::TrainingSettings s;
    s.epochs = c.epochs;
    s.batch_size = c.batch;
    s.learning_rate = 0.01;
    s.loss.w = c.w;
    s.loss.penalty = c.penalty > 0 ? qgml::PenaltyKind::frobenius_squared : qgml::PenaltyKind::none;
    s.loss.penalty_weight = c.penalty;
    s.seed = 7;
    s.check_replicas = true;

    const auto all = qgml::sphere_points<Real>(exec, c.points, 3, 0.05, 42);
    auto reference = qgml::qr_configuration<Real>(3, 4, 1, exec);
    qgml::Trainer<Real, Exec> one(reference, all, s, exec);
    const auto ref = one.train();

    const auto shard = qgml::shard_range(c.points, comm.size(), comm.rank());
    const auto mine = qgml::sphere_points<Real>(exec, int(shard.size()), 3, 0.05, 42, shard.begin);
    {  // the generator's shard is exactly this rank's rows of the full data set
      auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), all);
      auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mine);
      bool same = true;
      for (int t = 0; t < int(shard.size()); ++t)
        for (int k = 0; k < 3; ++k) same = same && a(shard.begin + t, k) == b(t, k);
      CHECK(same);
    }
    auto config = qgml::qr_configuration<Real>(3, 4, 1, exec);
    qgml::Trainer<Real, Exec> many(config, mine, s, exec, comm, c.points);
    const auto h = many.train();
    check_same_history<Real>(ref, h, comm.size());
    CHECK(many.replica_checks() == (comm.size() > 1 ? c.epochs : 0));
    CHECK(max_difference(config, reference) <= (std::is_same_v<Real, double> ? 1e-10 : 1e-3));
    CHECK(many.bytes_per_allreduce() == (comm.size() > 1 ? (2 * 3 * 16 + qgml::loss_sum_count) * 8u : 0u));
  }
}

TEST_CASE("a checkpoint written on P ranks resumes in one process and on P ranks alike", "[mpi]") {
  qgml::mpi::Communicator comm;
  const Exec exec;
  namespace fs = std::filesystem;
  const std::string dir = "mpi-checkpoint-" + std::to_string(comm.size()) + "-ranks";
  if (comm.rank() == 0) fs::remove_all(dir);
  comm.broadcast("", 0);  // a barrier: nobody looks at dir before it is cleared

  qgml::TrainingSettings s;
  s.epochs = 10;
  s.batch_size = 300;
  s.learning_rate = 0.01;
  s.loss.w = 0.25;
  s.seed = 3;
  const int total = 1500;
  const auto all = qgml::sphere_points<double>(exec, total, 3, 0.0, 42);
  auto reference = qgml::qr_configuration<double>(3, 3, 1, exec);
  const auto ref = qgml::Trainer<double, Exec>(reference, all, s, exec).train();

  const auto shard = qgml::shard_range(total, comm.size(), comm.rank());
  const auto mine = qgml::sphere_points<double>(exec, int(shard.size()), 3, 0.0, 42, shard.begin);
  {
    auto first_half = s;
    first_half.epochs = 4;
    first_half.checkpoint_dir = dir;
    auto config = qgml::qr_configuration<double>(3, 3, 1, exec);
    qgml::Trainer<double, Exec>(config, mine, first_half, exec, comm, total).train();
  }
  // One process (on every rank) continues from the P-rank checkpoint ...
  auto one_config = qgml::qr_configuration<double>(3, 3, 99, exec);
  qgml::Trainer<double, Exec> one(one_config, all, s, exec);
  one.load_checkpoint(dir);
  CHECK(one.epoch() == 4);
  check_same_history<double>(ref, one.train(), comm.size() == 1 ? 1 : 2);
  // ... and so do the P ranks.
  auto many_config = qgml::qr_configuration<double>(3, 3, 99, exec);
  qgml::Trainer<double, Exec> many(many_config, mine, s, exec, comm, total);
  many.load_checkpoint(dir);
  check_same_history<double>(ref, many.train(), comm.size() == 1 ? 1 : 2);
  CHECK(max_difference(many_config, reference) <= 1e-10);
}

namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

// The warm-start basis of every rank's shard is gathered into the checkpoint's warm_start.npy of all T
// points (the file of a one-process run), and each rank takes its rows back at a resume: a run stopped
// at an epoch's end or between batches and resumed ends byte-identical to the uninterrupted one, and
// the basis moves between rank counts unchanged.
TEST_CASE("a warm-started run stopped and resumed on P ranks ends byte-identical to the uninterrupted one",
          "[mpi][warm-start]") {
  qgml::mpi::Communicator comm;
  const Exec exec;
  namespace fs = std::filesystem;
  const int p = comm.size(), r = comm.rank();
  const std::string dir = "mpi-warm-" + std::to_string(p) + "-ranks";
  if (r == 0) fs::remove_all(dir);
  comm.broadcast("", 0);

  qgml::TrainingSettings s;
  s.epochs = 6;
  s.batch_size = 300;
  s.learning_rate = 0.01;
  s.loss.w = 0.25;
  s.seed = 3;
  s.warm_start_eigh = true;
  const int total = 1500;  // 5 batches per epoch
  const auto shard = qgml::shard_range(total, p, r);
  const auto mine = qgml::sphere_points<double>(exec, int(shard.size()), 3, 0.0, 42, shard.begin);
  const auto run = [&](const qgml::TrainingSettings& settings, const std::string& resume, int stop_at_query) {
    auto config = qgml::qr_configuration<double>(3, 3, resume.empty() ? 1 : 99, exec);
    qgml::Trainer<double, Exec> t(config, mine, settings, exec, comm, total);
    if (!resume.empty()) t.load_checkpoint(resume);
    int asked = 0;
    if (stop_at_query > 0) t.set_stop_query([&] { return ++asked == stop_at_query; });
    t.train();
    CHECK(t.interrupted() == (stop_at_query > 0));
    return qgml::to_host(config, exec);
  };
  const qgml::HostMatrices uninterrupted = run(s, "", 0);
  const auto identical = [&](const qgml::HostMatrices& a) {
    return a.values.size() == uninterrupted.values.size() &&
           std::memcmp(a.values.data(), uninterrupted.values.data(), a.values.size() * sizeof(a.values[0])) == 0;
  };

  SECTION("stopped at the end of an epoch") {
    auto first = s;
    first.epochs = 3;
    first.checkpoint_dir = dir;
    run(first, "", 0);
    const auto state = qgml::read_checkpoint(dir);
    CHECK(state.epoch == 3);
    CHECK(state.warm_basis.D == total);
    CHECK(identical(run(s, dir, 0)));
  }
  SECTION("stopped between batches (4 boundaries per epoch: the third of epoch 4)") {
    auto first = s;
    first.checkpoint_dir = dir;
    first.checkpoint_every = 0;
    run(first, "", 3 * 4 + 3);
    CHECK(qgml::read_checkpoint(dir).epoch == 3);
    CHECK(identical(run(s, dir, 0)));
  }
  SECTION("the basis file is that of all T points on any number of ranks") {
    auto first = s;
    first.epochs = 3;
    first.checkpoint_dir = dir;
    run(first, "", 0);
    const std::string written = dir + "/epoch-000003/warm_start.npy";
    // Read back on P ranks and on one process (each rank its own copy), then written again unchanged.
    auto again = s;
    again.checkpoint_dir = dir + "-again";
    if (r == 0) fs::remove_all(again.checkpoint_dir);
    comm.broadcast("", 0);
    auto config = qgml::qr_configuration<double>(3, 3, 99, exec);
    qgml::Trainer<double, Exec> many(config, mine, again, exec, comm, total);
    many.load_checkpoint(dir);
    many.save_checkpoint(again.checkpoint_dir);
    const auto all = qgml::sphere_points<double>(exec, total, 3, 0.0, 42);
    auto one_config = qgml::qr_configuration<double>(3, 3, 99, exec);
    auto one_settings = s;
    one_settings.checkpoint_dir = dir + "-one-" + std::to_string(r);
    fs::remove_all(one_settings.checkpoint_dir);
    qgml::Trainer<double, Exec> one(one_config, all, one_settings, exec);
    one.load_checkpoint(dir);
    one.save_checkpoint(one_settings.checkpoint_dir);
    if (r == 0) CHECK(file_bytes(again.checkpoint_dir + "/epoch-000003/warm_start.npy") == file_bytes(written));
    CHECK(file_bytes(one_settings.checkpoint_dir + "/epoch-000003/warm_start.npy") == file_bytes(written));
    CHECK(file_bytes(written).size() > std::size_t(total) * 9 * 16);
    // The one process continues warm from the P ranks' bases.
    const auto history = one.train();
    REQUIRE(history.size() == 6);
    CHECK(history[3].eigh_sweeps > 0);
    CHECK(history[3].eigh_sweeps <= 8);
    fs::remove_all(one_settings.checkpoint_dir);
  }
  std::int64_t barrier = 0;  // an all-reduce: rank 0 removes nothing that another rank still reads
  comm.allreduce_max(&barrier, 1);
  if (r == 0) {
    fs::remove_all(dir);
    fs::remove_all(dir + "-again");
  }
}

TEST_CASE("each rank reads only its rows of a points file, and a bad row fails every rank", "[mpi]") {
  qgml::mpi::Communicator comm;
  const Exec exec;
  const int p = comm.size(), r = comm.rank();
  const std::string base = "mpi-points-" + std::to_string(p);
  const int total = 1003;
  const auto all = qgml::to_host_data(qgml::sphere_points<double>(exec, total, 3, 0.1, 5));
  qgml::HostData bad = all;
  const int bad_row = total - 2;  // held by the last rank
  if (r == 0) {
    qgml::write_points_csv(base + ".csv", all);
    qgml::write_points_npy(base + ".npy", all);
    std::string text = "x,y,z\n";
    for (int t = 0; t < total; ++t)
      text += (t == bad_row ? std::string("0.5,abc,0.1") : std::to_string(all(t, 0)) + ",1,2") + "\n";
    std::FILE* f = std::fopen((base + "-bad.csv").c_str(), "w");
    REQUIRE(f);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  comm.broadcast("", 0);
  for (const std::string ext : {".csv", ".npy"}) {
    const auto shard = qgml::read_points_shard(base + ext, r, p);
    const auto range = qgml::shard_range(total, p, r);
    CHECK(shard.total == total);
    CHECK(shard.first == range.begin);
    REQUIRE(shard.data.rows == int(range.size()));
    REQUIRE(shard.data.cols == 3);
    bool same = true;
    for (int t = 0; t < shard.data.rows; ++t)
      for (int k = 0; k < 3; ++k) same = same && shard.data(t, k) == all(int(range.begin) + t, k);
    CHECK(same);
  }
  std::string message;
  try {
    qgml::run_collectively(comm, [&] { qgml::read_points_shard(base + "-bad.csv", r, p); });
  } catch (const qgml::Error& e) {
    message = e.what();
  }
  // line = bad_row + 2 (1-based, after the header)
  CHECK(message.find("line " + std::to_string(bad_row + 2) + ", column 2: 'abc' is not a number") != std::string::npos);
  if (p > 1) CHECK(message.rfind("rank " + std::to_string(p - 1) + " of " + std::to_string(p) + ": ", 0) == 0);
}
