#include "qgml/train/training_settings.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "qgml/common/error.hpp"
#include "qgml/io/atomic_file.hpp"

#include "io/json_file.hpp"

namespace qgml {

double LearningRateSchedule::at(double lr, int epoch, int epochs) const {
  switch (kind) {
    case Kind::constant:
      return lr;
    case Kind::exponential:
      return lr * std::pow(gamma, epoch);
    case Kind::step:
      return lr * std::pow(gamma, epoch / (step_size > 0 ? step_size : 1));
    case Kind::cosine: {
      const double pi = 3.141592653589793;
      const double f = epochs > 0 ? double(epoch) / epochs : 0.0;
      return min_lr + (lr - min_lr) * 0.5 * (1 + std::cos(pi * f));
    }
  }
  return lr;
}

LearningRateSchedule::Kind parse_schedule_kind(const std::string& s) {
  if (s == "constant") return LearningRateSchedule::Kind::constant;
  if (s == "exponential") return LearningRateSchedule::Kind::exponential;
  if (s == "step") return LearningRateSchedule::Kind::step;
  if (s == "cosine") return LearningRateSchedule::Kind::cosine;
  throw Error("unknown learning-rate schedule '" + s + "' (expected constant, exponential, step or cosine)");
}

std::string to_string(LearningRateSchedule::Kind k) {
  switch (k) {
    case LearningRateSchedule::Kind::constant:
      return "constant";
    case LearningRateSchedule::Kind::exponential:
      return "exponential";
    case LearningRateSchedule::Kind::step:
      return "step";
    case LearningRateSchedule::Kind::cosine:
      return "cosine";
  }
  return "?";
}

std::int64_t effective_batch_size(const TrainingSettings& settings, std::int64_t total_points) {
  return settings.batch_size <= 0 || settings.batch_size > total_points ? total_points : settings.batch_size;
}

bool early_stop_converged(const TrainingSettings& settings, const std::vector<EpochRecord>& history) {
  const double tol = settings.early_stop_tolerance;
  const std::size_t w = std::size_t(std::max(1, settings.early_stop_window));
  if (tol <= 0 || history.size() < 2 * w) return false;
  double recent = 0, before = 0;
  for (std::size_t i = 0; i < w; ++i) {
    recent += history[history.size() - 1 - i].total;
    before += history[history.size() - 1 - w - i].total;
  }
  recent /= double(w);
  before /= double(w);
  if (!std::isfinite(recent) || !std::isfinite(before)) return false;
  return std::abs(recent - before) <= tol * std::abs(before);
}

namespace {
const char* csv_header =
    "epoch,total,reconstruction,fluctuation,penalty,learning_rate,degenerate_points,skipped_batches,"
    "eigh_failures,batches,seconds,points_per_second";

std::string number(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}
}  // namespace

void write_history_csv(const std::string& path, const std::vector<EpochRecord>& history) {
  std::ostringstream out;
  out << csv_header << "\n";
  for (const auto& r : history)
    out << r.epoch << "," << number(r.total) << "," << number(r.reconstruction) << "," << number(r.fluctuation) << ","
        << number(r.penalty) << "," << number(r.learning_rate) << "," << r.degenerate_points << "," << r.skipped_batches
        << "," << r.eigh_failures << "," << r.batches << "," << number(r.seconds) << "," << number(r.points_per_second)
        << "\n";
  write_file_atomically(path, out.str());
}

void write_history_json(const std::string& path, const std::vector<EpochRecord>& history) {
  detail::Json records = detail::Json::array();
  for (const auto& r : history)
    records.push_back({{"epoch", r.epoch},
                       {"total", r.total},
                       {"reconstruction", r.reconstruction},
                       {"fluctuation", r.fluctuation},
                       {"penalty", r.penalty},
                       {"learning_rate", r.learning_rate},
                       {"degenerate_points", r.degenerate_points},
                       {"skipped_batches", r.skipped_batches},
                       {"eigh_failures", r.eigh_failures},
                       {"batches", r.batches},
                       {"seconds", r.seconds},
                       {"points_per_second", r.points_per_second}});
  detail::write_json_file(path, records);
}

std::vector<EpochRecord> read_history_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("history '" + path + "': cannot open");
  std::string line;
  if (!std::getline(in, line) || line != csv_header)
    throw Error("history '" + path + "': line 1: expected the header '" + std::string(csv_header) + "'");
  std::vector<EpochRecord> h;
  int lineno = 1;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) f.push_back(cell);
    if (f.size() != 12)
      throw Error("history '" + path + "': line " + std::to_string(lineno) + ": expected 12 fields, got " +
                  std::to_string(f.size()));
    try {
      EpochRecord r;
      r.epoch = std::stoi(f[0]);
      r.total = std::stod(f[1]);
      r.reconstruction = std::stod(f[2]);
      r.fluctuation = std::stod(f[3]);
      r.penalty = std::stod(f[4]);
      r.learning_rate = std::stod(f[5]);
      r.degenerate_points = std::stol(f[6]);
      r.skipped_batches = std::stoi(f[7]);
      r.eigh_failures = std::stoi(f[8]);
      r.batches = std::stoi(f[9]);
      r.seconds = std::stod(f[10]);
      r.points_per_second = std::stod(f[11]);
      h.push_back(r);
    } catch (const std::exception&) {
      throw Error("history '" + path + "': line " + std::to_string(lineno) + ": a field is not a number");
    }
  }
  return h;
}

}  // namespace qgml
