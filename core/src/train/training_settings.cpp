#include "qgml/train/training_settings.hpp"

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>

#include "qgml/common/file_error.hpp"
#include "qgml/io/atomic_file.hpp"
#include "qgml/io/parse_number.hpp"

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
const char* supervised_columns =
    ",supervised,train_mae,train_rmse,train_r2,train_accuracy,train_auc,validation_mae,validation_rmse,"
    "validation_r2,validation_accuracy,validation_auc";
constexpr std::size_t base_fields = 12, supervised_fields = 11;

std::string number(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}
}  // namespace

void write_history_csv(const std::string& path, const std::vector<EpochRecord>& history) {
  std::ostringstream out;
  const bool targets = !history.empty() && history.front().has_targets;
  out << csv_header << (targets ? supervised_columns : "") << "\n";
  for (const auto& r : history) {
    out << r.epoch << "," << number(r.total) << "," << number(r.reconstruction) << "," << number(r.fluctuation) << ","
        << number(r.penalty) << "," << number(r.learning_rate) << "," << r.degenerate_points << "," << r.skipped_batches
        << "," << r.eigh_failures << "," << r.batches << "," << number(r.seconds) << "," << number(r.points_per_second);
    if (targets)
      for (double v : {r.supervised, r.train.mae, r.train.rmse, r.train.r2, r.train.accuracy, r.train.auc,
                       r.validation.mae, r.validation.rmse, r.validation.r2, r.validation.accuracy, r.validation.auc})
        out << "," << number(v);
    out << "\n";
  }
  write_file_atomically(path, out.str());
}

void write_history_json(const std::string& path, const std::vector<EpochRecord>& history) {
  detail::Json records = detail::Json::array();
  for (const auto& r : history) {
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
    if (!r.has_targets) continue;
    const auto metrics = [](const SupervisedMetrics& m) {
      return detail::Json{{"mae", m.mae}, {"rmse", m.rmse}, {"r2", m.r2}, {"accuracy", m.accuracy}, {"auc", m.auc}};
    };
    records.back()["supervised"] = r.supervised;
    records.back()["train"] = metrics(r.train);
    records.back()["validation"] = metrics(r.validation);
  }
  detail::write_json_file(path, records);
}

namespace {

// A real field of history.csv as write_history_csv writes it: the grammar of parse_real, and also what a
// record may hold that no setting may: inf, -inf, nan, and a subnormal value (a learning rate decayed
// below DBL_MIN), read exactly so that a resumed run continues bit-identically.
bool parse_history_real(const std::string& text, double& value) {
  if (parse_real(text, value)) return true;
  if (text == "nan" || text == "-nan") {
    value = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (text == "inf" || text == "-inf") {
    value = text[0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos) return false;
  double v = 0;
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(text.data(), end, v, std::chars_format::general);
  if (r.ec != std::errc() || r.ptr != end || !(std::fabs(v) < DBL_MIN)) return false;
  value = v;
  return true;
}

template <class Int>
bool parse_history_integer(const std::string& text, Int& value) {
  long long v = 0;
  if (!parse_integer(text, v) || v < std::numeric_limits<Int>::min() || v > std::numeric_limits<Int>::max())
    return false;
  value = Int(v);
  return true;
}

}  // namespace

std::vector<EpochRecord> read_history_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw FileError("history '" + path + "': cannot open");
  std::string line;
  const std::string supervised_header = std::string(csv_header) + supervised_columns;
  if (!std::getline(in, line) || (line != csv_header && line != supervised_header))
    throw Error("history '" + path + "': line 1: expected the header '" + std::string(csv_header) + "' (" +
                "followed by '" + std::string(supervised_columns) + "' for supervised training)");
  const bool targets = line == supervised_header;
  const std::size_t fields = targets ? base_fields + supervised_fields : base_fields;
  static const char* const names[base_fields + supervised_fields] = {"epoch",
                                                                     "total",
                                                                     "reconstruction",
                                                                     "fluctuation",
                                                                     "penalty",
                                                                     "learning_rate",
                                                                     "degenerate_points",
                                                                     "skipped_batches",
                                                                     "eigh_failures",
                                                                     "batches",
                                                                     "seconds",
                                                                     "points_per_second",
                                                                     "supervised",
                                                                     "train_mae",
                                                                     "train_rmse",
                                                                     "train_r2",
                                                                     "train_accuracy",
                                                                     "train_auc",
                                                                     "validation_mae",
                                                                     "validation_rmse",
                                                                     "validation_r2",
                                                                     "validation_accuracy",
                                                                     "validation_auc"};
  std::vector<EpochRecord> h;
  int lineno = 1;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::vector<std::size_t> column;  // 1-based column where each field starts
    for (std::size_t start = 0;;) {
      const std::size_t comma = line.find(',', start);
      column.push_back(start + 1);
      f.push_back(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (f.size() != fields)
      throw Error("history '" + path + "': line " + std::to_string(lineno) + ": expected " + std::to_string(fields) +
                  " fields, got " + std::to_string(f.size()));
    const std::size_t ok = base_fields + supervised_fields;
    std::size_t bad = ok;
    const auto integer = [&](std::size_t i, auto& out) {
      if (bad == ok && !parse_history_integer(f[i], out)) bad = i;
    };
    const auto real = [&](std::size_t i, double& out) {
      if (bad == ok && !parse_history_real(f[i], out)) bad = i;
    };
    EpochRecord r;
    integer(0, r.epoch);
    real(1, r.total);
    real(2, r.reconstruction);
    real(3, r.fluctuation);
    real(4, r.penalty);
    real(5, r.learning_rate);
    integer(6, r.degenerate_points);
    integer(7, r.skipped_batches);
    integer(8, r.eigh_failures);
    integer(9, r.batches);
    real(10, r.seconds);
    real(11, r.points_per_second);
    if (targets) {
      r.has_targets = true;
      double* const values[supervised_fields] = {
          &r.supervised,     &r.train.mae,           &r.train.rmse,     &r.train.r2,
          &r.train.accuracy, &r.train.auc,           &r.validation.mae, &r.validation.rmse,
          &r.validation.r2,  &r.validation.accuracy, &r.validation.auc};
      for (std::size_t i = 0; i < supervised_fields; ++i) real(base_fields + i, *values[i]);
    }
    if (bad != ok)
      throw Error("history '" + path + "': line " + std::to_string(lineno) + ", column " + std::to_string(column[bad]) +
                  ": " + names[bad] + " '" + f[bad] + "' is not " +
                  (bad == 0 || (bad >= 6 && bad <= 9) ? "an integer" : "a number"));
    h.push_back(r);
  }
  return h;
}

}  // namespace qgml
