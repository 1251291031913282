#include "qgml/train/checkpoint.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "qgml/common/error.hpp"
#include "qgml/io/atomic_file.hpp"
#include "qgml/io/npy.hpp"

namespace qgml {

namespace fs = std::filesystem;

namespace {

std::string epoch_name(int epoch) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "epoch-%06d", epoch);
  return buf;
}

std::string json_field(const std::string& text, const std::string& key, const std::string& file) {
  const std::string quoted = "\"" + key + "\"";
  auto p = text.find(quoted);
  if (p == std::string::npos) throw Error("checkpoint '" + file + "': missing field \"" + key + "\"");
  p = text.find(':', p) + 1;
  while (p < text.size() && (text[p] == ' ' || text[p] == '"')) ++p;
  auto e = p;
  while (e < text.size() && text[e] != ',' && text[e] != '"' && text[e] != '\n' && text[e] != '}') ++e;
  return text.substr(p, e - p);
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
    std::ostringstream js;
    js << "{\n  \"format\": \"qgml-checkpoint\",\n  \"version\": 1,\n  \"epoch\": " << s.epoch
       << ",\n  \"adam_step\": " << s.adam_step << ",\n  \"seed\": " << s.seed << ",\n  \"points\": " << s.points
       << ",\n  \"D\": " << s.matrices.D << ",\n  \"N\": " << s.matrices.N << ",\n  \"precision\": \""
       << (s.precision == Precision::double_precision ? "double" : "float") << "\"\n}\n";
    write_file_atomically((sub / "state.json").string(), js.str());
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
  std::ifstream in(state_path);
  if (!in) throw Error("checkpoint '" + dir + "': no state.json found (not a qgml checkpoint directory?)");
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  const std::string file = state_path.string();
  if (json_field(text, "format", file) != "qgml-checkpoint")
    throw Error("checkpoint '" + file + "': field \"format\" is not \"qgml-checkpoint\"");
  if (json_field(text, "version", file) != "1")
    throw Error("checkpoint '" + file + "': unsupported version " + json_field(text, "version", file) +
                " (this qgml reads version 1)");
  CheckpointState s;
  try {
    s.epoch = std::stoi(json_field(text, "epoch", file));
    s.adam_step = std::stoi(json_field(text, "adam_step", file));
    s.seed = std::stoull(json_field(text, "seed", file));
    s.points = std::stol(json_field(text, "points", file));
  } catch (const std::exception&) {
    throw Error("checkpoint '" + file + "': a numeric field (epoch, adam_step, seed, points) is not a valid number");
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
