#include "qgml/train/checkpoint.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "qgml/common/file_error.hpp"
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
    throw FileError("checkpoint '" + path + "': expected a real (D, N, N) array matching the matrices");
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

// A name that LATEST may hold: epoch-NNNNNN (six digits), nothing else (no path).
bool is_epoch_name(const std::string& n) {
  if (n.size() != 12 || n.rfind("epoch-", 0) != 0) return false;
  return std::all_of(n.begin() + 6, n.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

std::uint64_t file_hash(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw FileError("checkpoint file '" + p.string() + "': cannot open");
  std::uint64_t h = fnv1a64_offset;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) h = fnv1a64(buffer, std::size_t(in.gcount()), h);
  return h;
}

// Checks every file of the epoch directory `sub` against its `checksums` (see checkpoint.hpp).
void verify_checksums(const fs::path& sub) {
  const fs::path list = sub / "checksums";
  std::ifstream in(list);
  if (!in)
    throw FileError("checkpoint '" + sub.string() +
                    "': no checksums file (written by an older qgml, or damaged): it cannot be verified");
  std::set<std::string> listed;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const auto space = line.find("  ");
    const std::string digest = line.substr(0, space);
    const std::string name = space == std::string::npos ? "" : line.substr(space + 2);
    if (digest.size() != 16 || name.empty() || name.find('/') != std::string::npos || name == "checksums")
      throw FileError("checkpoint file '" + list.string() + "' line " + std::to_string(number) +
                      ": expected '<16 hex digits>  <file name>'");
    const fs::path file = sub / name;
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
      throw FileError("checkpoint file '" + file.string() + "': listed in checksums but missing");
    if (hex64(file_hash(file)) != digest)
      throw FileError("checkpoint file '" + file.string() +
                      "': checksum mismatch (the file was changed or damaged after it was written)");
    listed.insert(name);
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(sub, ec)) {
    const std::string n = e.path().filename().string();
    if (n != "checksums" && !listed.count(n))
      throw FileError("checkpoint file '" + e.path().string() + "': not listed in checksums");
  }
}

void write_warm_basis(const std::string& path, const HostMatrices& b) {
  write_npy(path, NpyType::complex128, {std::size_t(b.D), std::size_t(b.N), std::size_t(b.N)}, b.values.data());
}

HostMatrices read_warm_basis(const std::string& path, long points, int n) {
  const NpyArray a = read_npy(path);
  if (a.type != NpyType::complex128 ||
      a.shape != std::vector<std::size_t>{std::size_t(points), std::size_t(n), std::size_t(n)})
    throw FileError("checkpoint '" + path + "': expected a complex128 (T, N, N) array for T = " +
                    std::to_string(points) + ", N = " + std::to_string(n));
  HostMatrices b;
  b.D = int(points);
  b.N = n;
  b.values.resize(a.count());
  std::memcpy(b.values.data(), a.bytes.data(), a.bytes.size());
  return b;
}

}  // namespace

std::uint64_t fnv1a64(const void* bytes, std::size_t size, std::uint64_t hash) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (std::size_t i = 0; i < size; ++i) {
    hash ^= p[i];
    hash *= 1099511628211ULL;
  }
  return hash;
}

std::string hex64(std::uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string checkpoint_checksums(const std::string& epoch_dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(epoch_dir)) {
    const std::string n = e.path().filename().string();
    if (n != "checksums") names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  std::string text;
  for (const std::string& n : names) text += hex64(file_hash(fs::path(epoch_dir) / n)) + "  " + n + "\n";
  return text;
}

void write_checkpoint(const std::string& dir, const CheckpointState& s) {
  const fs::path root(dir);
  std::error_code ec;
  // Old epochs are deleted in it: through a link, they would be deleted wherever it points.
  if (fs::is_symlink(fs::symlink_status(root, ec)))
    throw FileError("checkpoint directory '" + dir +
                    "' is a symbolic link; qgml writes and deletes checkpoints only in a directory itself");
  fs::create_directories(root, ec);
  if (ec) throw FileError("checkpoint directory '" + dir + "': cannot create: " + ec.message());
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
    if (!s.warm_basis.values.empty()) write_warm_basis((sub / "warm_start.npy").string(), s.warm_basis);
    if (s.best_epoch > 0) save_matrices((sub / "best_matrices.npy").string(), s.best_matrices, s.precision);
    detail::Json settings = detail::Json::object();
    for (const auto& [key, value] : s.fingerprint.settings) settings[key] = value;
    detail::write_json_file((sub / "state.json").string(),
                            {{"format", "qgml-checkpoint"},
                             {"version", 2},
                             {"epoch", s.epoch},
                             {"adam_step", s.adam_step},
                             {"seed", s.seed},
                             {"points", s.points},
                             {"D", s.matrices.D},
                             {"N", s.matrices.N},
                             {"stopped_early", s.stopped_early},
                             {"max_epochs", s.max_epochs},
                             {"best_epoch", s.best_epoch},
                             {"best_validation", s.best_validation},
                             {"precision", s.precision == Precision::double_precision ? "double" : "float"},
                             {"fingerprint", {{"data", s.fingerprint.data}, {"settings", settings}}}});
    write_file_atomically((sub / "checksums").string(), checkpoint_checksums(sub.string()));
    // The complete checkpoint takes its final name; a previous one of the same epoch is replaced.
    if (fs::exists(final_dir)) fs::rename(final_dir, root / (name + ".old"));
    fs::rename(sub, final_dir);
    fs::remove_all(root / (name + ".old"));
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(sub, ec);
    throw FileError("checkpoint directory '" + dir + "': " + e.what());
  } catch (...) {
    fs::remove_all(sub, ec);
    throw;
  }
  write_file_atomically((root / "LATEST").string(), name + "\n");
  // Keep the newest two complete checkpoints.
  std::vector<std::string> old;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string n = e.path().filename().string();
    if (!e.is_symlink(ec) && e.is_directory(ec) && n.rfind("epoch-", 0) == 0 && n.find('.') == std::string::npos &&
        n < name)
      old.push_back(n);
  }
  std::sort(old.begin(), old.end());
  for (std::size_t i = 0; i + 1 < old.size(); ++i) fs::remove_all(root / old[i], ec);
}

namespace {

CheckpointState read_checkpoint_files(const std::string& dir) {
  fs::path sub(dir);
  std::string latest_name;
  if (fs::exists(sub / "LATEST")) {
    std::ifstream in(sub / "LATEST");
    std::getline(in, latest_name);
    if (!is_epoch_name(latest_name))
      throw FileError("checkpoint file '" + (sub / "LATEST").string() + "': names '" + latest_name +
                      "', not an epoch-NNNNNN directory of this checkpoint directory");
    sub /= latest_name;
    if (!fs::is_directory(sub))
      throw FileError("checkpoint file '" + (fs::path(dir) / "LATEST").string() + "': names '" + latest_name +
                      "', which does not exist");
  }
  const fs::path state_path = sub / "state.json";
  if (!fs::exists(state_path))
    throw FileError("checkpoint '" + dir + "': no state.json found (not a qgml checkpoint directory?)");
  verify_checksums(sub);
  const std::string what = "checkpoint '" + state_path.string() + "'";
  const detail::Json state = detail::read_json_object(state_path.string(), what);
  const auto format = state.find("format");
  if (format == state.end() || *format != "qgml-checkpoint")
    throw FileError(
        what + ": field \"format\" is not \"qgml-checkpoint\" (got " +
        (format == state.end() ? std::string("nothing: the field is missing") : detail::json_text(*format)) + ")");
  const detail::Json& version = detail::json_member(state, "version", what);
  if (version != 2)
    throw FileError(what + ": unsupported version " + detail::json_text(version) + " (this qgml reads version 2)");
  CheckpointState s;
  s.epoch = detail::json_integer<int>(state, "epoch", what, 0);
  s.adam_step = detail::json_integer<int>(state, "adam_step", what, 0);
  s.seed = detail::json_integer<std::uint64_t>(state, "seed", what);
  s.points = detail::json_integer<long>(state, "points", what, 1);
  // Absent in checkpoints written before the early stop was recorded.
  if (state.contains("stopped_early")) {
    const detail::Json& v = state["stopped_early"];
    if (!v.is_boolean())
      throw FileError(what + ": field \"stopped_early\" must be true or false, got " + detail::json_text(v));
    s.stopped_early = v.get<bool>();
    s.max_epochs = detail::json_integer<int>(state, "max_epochs", what, 0);
  }
  s.matrices = load_matrices((sub / "matrices.npy").string(), &s.precision);
  s.adam_m = read_moments((sub / "adam_m.npy").string(), s.matrices);
  s.adam_v = read_moments((sub / "adam_v.npy").string(), s.matrices);
  s.history = read_history_csv((sub / "history.csv").string());
  if (!latest_name.empty() && latest_name != epoch_name(s.epoch))
    throw FileError(what + ": epoch " + std::to_string(s.epoch) + " but the directory is " + latest_name);
  if (s.history.size() != std::size_t(s.epoch))
    throw FileError("checkpoint '" + (sub / "history.csv").string() + "': " + std::to_string(s.history.size()) +
                    " epochs recorded, the checkpoint is at epoch " + std::to_string(s.epoch));
  const detail::Json& fingerprint = detail::json_member(state, "fingerprint", what);
  const detail::Json& data = detail::json_member(fingerprint, "data", what + " fingerprint");
  const detail::Json& settings = detail::json_member(fingerprint, "settings", what + " fingerprint");
  if (!data.is_string() || !settings.is_object())
    throw FileError(what + ": field \"fingerprint\" must hold a text \"data\" and an object \"settings\"");
  s.fingerprint.data = data.get<std::string>();
  for (const auto& [key, value] : settings.items()) {
    if (!value.is_string()) throw FileError(what + ": fingerprint setting \"" + key + "\" must be text");
    s.fingerprint.settings.emplace_back(key, value.get<std::string>());
  }
  if (fs::exists(sub / "warm_start.npy"))
    s.warm_basis = read_warm_basis((sub / "warm_start.npy").string(), s.points, s.matrices.N);
  // Absent in checkpoints written before the best epoch was kept.
  if (state.contains("best_epoch")) {
    s.best_epoch = detail::json_integer<int>(state, "best_epoch", what, 0);
    if (s.best_epoch > s.epoch)
      throw FileError(what + ": field \"best_epoch\" = " + std::to_string(s.best_epoch) + " is after the epoch " +
                      std::to_string(s.epoch) + " of the checkpoint");
    const detail::Json& best = detail::json_member(state, "best_validation", what);
    if (!best.is_number())
      throw FileError(what + ": field \"best_validation\" must be a number, got " + detail::json_text(best));
    s.best_validation = best.get<double>();
    if (s.best_epoch > 0) {
      Precision p = s.precision;
      s.best_matrices = load_matrices((sub / "best_matrices.npy").string(), &p);
      if (s.best_matrices.D != s.matrices.D || s.best_matrices.N != s.matrices.N || p != s.precision)
        throw FileError("checkpoint '" + (sub / "best_matrices.npy").string() +
                        "': expected the shape and precision of matrices.npy");
    }
  }
  return s;
}

}  // namespace

CheckpointState read_checkpoint(const std::string& dir) {
  try {
    return read_checkpoint_files(dir);
  } catch (const fs::filesystem_error& e) {
    // A name the file system refuses (too long, a loop of links) in LATEST or checksums is a damaged checkpoint.
    throw FileError("checkpoint '" + dir + "': " + e.code().message() + " for '" + e.path1().string() + "'");
  }
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
