#include "qgml/train/checkpoint.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "qgml/common/error.hpp"
#include "qgml/io/atomic_file.hpp"
#include "qgml/io/npy.hpp"

#include "io/json_file.hpp"

namespace qgml {

namespace fs = std::filesystem;

namespace {

std::string epoch_name(int epoch) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "epoch-%06d", epoch);
  return buf;
}

void write_moments(const std::string& path, const std::vector<double>& m, const HostMatrices& shape, Precision p) {
  const std::vector<std::size_t> dims{std::size_t(shape.D), std::size_t(shape.N), std::size_t(shape.N)};
  if (p == Precision::double_precision) {
    write_npy(path, NpyType::float64, dims, m.data());
  } else {
    std::vector<float> f(m.begin(), m.end());
    write_npy(path, NpyType::float32, dims, f.data());
  }
}

std::vector<double> read_moments(const std::string& path, const HostMatrices& shape) {
  const NpyArray a = read_npy(path);
  if (a.shape != std::vector<std::size_t>{std::size_t(shape.D), std::size_t(shape.N), std::size_t(shape.N)} ||
      (a.type != NpyType::float64 && a.type != NpyType::float32))
    throw Error("checkpoint '" + path + "': expected a real (D, N, N) array matching the matrices");
  std::vector<double> m(a.count());
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (a.type == NpyType::float64) {
      std::memcpy(&m[i], &a.bytes[8 * i], 8);
    } else {
      float f;
      std::memcpy(&f, &a.bytes[4 * i], 4);
      m[i] = f;
    }
  }
  return m;
}

}  // namespace

void write_checkpoint(const std::string& dir, const CheckpointState& s) {
  const fs::path root(dir);
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw Error("checkpoint directory '" + dir + "': cannot create: " + ec.message());
  const std::string name = epoch_name(s.epoch);
  const fs::path final_dir = root / name;
  const fs::path sub = root / (name + ".tmp");
  try {
    fs::remove_all(sub);
    fs::create_directories(sub);
    save_matrices((sub / "matrices.npy").string(), s.matrices, s.precision);
    write_moments((sub / "adam_m.npy").string(), s.adam_m, s.matrices, s.precision);
    write_moments((sub / "adam_v.npy").string(), s.adam_v, s.matrices, s.precision);
    write_history_csv((sub / "history.csv").string(), s.history);
    detail::write_json_file((sub / "state.json").string(),
                            {{"format", "qgml-checkpoint"},
                             {"version", 1},
                             {"epoch", s.epoch},
                             {"adam_step", s.adam_step},
                             {"seed", s.seed},
                             {"points", s.points},
                             {"D", s.matrices.D},
                             {"N", s.matrices.N},
                             {"stopped_early", s.stopped_early},
                             {"max_epochs", s.max_epochs},
                             {"precision", s.precision == Precision::double_precision ? "double" : "float"}});
    // The complete checkpoint takes its final name; a previous one of the same epoch is replaced.
    if (fs::exists(final_dir)) fs::rename(final_dir, root / (name + ".old"));
    fs::rename(sub, final_dir);
    fs::remove_all(root / (name + ".old"));
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(sub, ec);
    throw Error("checkpoint directory '" + dir + "': " + e.what());
  } catch (...) {
    fs::remove_all(sub, ec);
    throw;
  }
  write_file_atomically((root / "LATEST").string(), name + "\n");
  // Keep the newest two complete checkpoints.
  std::vector<std::string> old;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string n = e.path().filename().string();
    if (e.is_directory() && n.rfind("epoch-", 0) == 0 && n.find('.') == std::string::npos && n < name) old.push_back(n);
  }
  std::sort(old.begin(), old.end());
  for (std::size_t i = 0; i + 1 < old.size(); ++i) fs::remove_all(root / old[i], ec);
}

CheckpointState read_checkpoint(const std::string& dir) {
  fs::path sub(dir);
  if (fs::exists(sub / "LATEST")) {
    std::ifstream in(sub / "LATEST");
    std::string name;
    std::getline(in, name);
    sub /= name;
  }
  const fs::path state_path = sub / "state.json";
  if (!fs::exists(state_path))
    throw Error("checkpoint '" + dir + "': no state.json found (not a qgml checkpoint directory?)");
  const std::string what = "checkpoint '" + state_path.string() + "'";
  const detail::Json state = detail::read_json_object(state_path.string(), what);
  const auto format = state.find("format");
  if (format == state.end() || *format != "qgml-checkpoint")
    throw Error(what + ": field \"format\" is not \"qgml-checkpoint\" (got " +
                (format == state.end() ? std::string("nothing: the field is missing") : detail::json_text(*format)) +
                ")");
  const detail::Json& version = detail::json_member(state, "version", what);
  if (version != 1)
    throw Error(what + ": unsupported version " + detail::json_text(version) + " (this qgml reads version 1)");
  CheckpointState s;
  s.epoch = detail::json_integer<int>(state, "epoch", what, 0);
  s.adam_step = detail::json_integer<int>(state, "adam_step", what, 0);
  s.seed = detail::json_integer<std::uint64_t>(state, "seed", what);
  s.points = detail::json_integer<long>(state, "points", what, 1);
  // Absent in checkpoints written before the early stop was recorded.
  if (state.contains("stopped_early")) {
    const detail::Json& v = state["stopped_early"];
    if (!v.is_boolean())
      throw Error(what + ": field \"stopped_early\" must be true or false, got " + detail::json_text(v));
    s.stopped_early = v.get<bool>();
    s.max_epochs = detail::json_integer<int>(state, "max_epochs", what, 0);
  }
  s.matrices = load_matrices((sub / "matrices.npy").string(), &s.precision);
  s.adam_m = read_moments((sub / "adam_m.npy").string(), s.matrices);
  s.adam_v = read_moments((sub / "adam_v.npy").string(), s.matrices);
  s.history = read_history_csv((sub / "history.csv").string());
  return s;
}

void check_checkpoint_matches(const CheckpointState& s, const std::string& dir, int D, int N, long points,
                              std::uint64_t seed, Precision precision) {
  QGML_REQUIRE(s.matrices.D == D && s.matrices.N == N, "checkpoint '" + dir + "': D = " + std::to_string(s.matrices.D) +
                                                           ", N = " + std::to_string(s.matrices.N) +
                                                           " do not match the configuration being trained");
  QGML_REQUIRE(s.points == points, "checkpoint '" + dir + "' was written for T = " + std::to_string(s.points) +
                                       " points, the data have " + std::to_string(points));
  QGML_REQUIRE(s.seed == seed, "checkpoint '" + dir + "' was written with seed " + std::to_string(s.seed) +
                                   ", training uses seed " + std::to_string(seed) + ": resume with the same seed");
  QGML_REQUIRE(s.precision == precision,
               "checkpoint '" + dir + "' was written in " +
                   std::string(s.precision == Precision::single_precision ? "float" : "double") +
                   " precision; resume in the same precision");
}

}  // namespace qgml
