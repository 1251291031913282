// qgml tune CONFIG.yaml [--section.key value ...] [--batches 64,128,...] [--epochs-per-trial 3]
//                       [--memory-budget BYTES|auto] [--json FILE]
//
// Batch-size tuning on the data set and model of a training config: for each candidate batch size a
// Trainer on a fresh copy of the initial configuration runs one warm-up epoch and the timed epochs;
// the report gives the median epoch time, points/s and the trainer's buffer bytes per candidate, the
// fastest batch and the largest batch whose buffers fit in the memory budget. Speed only: how well a
// batch size trains is for qgml train to show.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/memory_budget.hpp"
#include "qgml/io/atomic_file.hpp"
#include "qgml/io/parse_number.hpp"
#include "qgml/train/trainer.hpp"

#include "commands.hpp"
#include "common/format.hpp"
#include "common/json_file.hpp"
#include "data/data_source.hpp"
#include "run/run_directory.hpp"
#include "settings/config.hpp"
#include "settings/run_setup.hpp"

namespace qgml::app {

namespace fs = std::filesystem;

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

constexpr int warmup_epochs = 1;
constexpr const char* speed_note =
    "tune measures speed only: every batch's loss and gradient are means over its points, so their scale "
    "does not depend on the batch size, but smaller batches take more Adam steps per epoch with noisier "
    "gradients; which batch size trains best (full batch or mini-batches) is for qgml train to show";

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (std::abs(b) >= 1024 && u < 5) {
    b /= 1024;
    ++u;
  }
  return u == 0 ? format("%.0f B", b) : format("%.1f %s", b, units[u]);
}

// A count or a measurement: integral values (byte counts) as JSON integers, the others as reals; not
// finite (nothing measured): null.
Json json_number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 9e15) return std::int64_t(v);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Options

struct TuneOptions {
  std::string config_path;
  std::vector<std::pair<std::string, std::string>> overrides;
  std::vector<long> batches;  // sorted, unique; empty: the default candidates
  int epochs_per_trial = 3;
  double budget = -1;  // bytes; < 0: auto
  std::string json;
};

const char* const tune_options_list = "--batches, --epochs-per-trial, --memory-budget, --json";

std::vector<long> parse_batches(const std::string& v) {
  const std::string what = "--batches '" + v + "'";
  const std::string expected = " (expected positive integers separated by commas, e.g. 64,128,256)";
  std::set<long> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = v.find(',', pos);
    const std::string item = v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty()) throw Error(what + ": empty entry" + expected);
    if (item.find_first_not_of("0123456789") != std::string::npos)
      throw Error(what + ": '" + item + "' is not a positive integer" + expected);
    long long b = 0;
    if (!parse_integer(item, b) || b > 1000000000LL)
      throw Error(what + ": " + item + " is too large (at most 1000000000)");
    if (b < 1) throw Error(what + ": " + item + " is not a positive integer" + expected);
    out.insert(b);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return {out.begin(), out.end()};
}

int parse_epochs(const std::string& v) {
  long long e = 0;
  if (!parse_integer(v, e)) e = 0;
  if (e < 1 || e > 1000000) throw Error("--epochs-per-trial '" + v + "': expected an integer from 1 to 1000000");
  return int(e);
}

// BYTES, optionally with a unit: kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (of 1024).
double parse_budget(const std::string& v) {
  if (v == "auto") return -1;
  const std::string expected =
      "--memory-budget '" + v + "': expected a number of bytes (e.g. 8000000, 512MiB, 2GB) or auto";
  // The number, then an optional unit (which starts with a letter other than e or E).
  std::size_t used = 0;
  while (used < v.size() && (std::isdigit(static_cast<unsigned char>(v[used])) || v[used] == '.' || v[used] == '+' ||
                             v[used] == '-' || v[used] == 'e' || v[used] == 'E'))
    ++used;
  double x = 0;
  if (!parse_real(v.substr(0, used), x)) throw Error(expected);
  std::string unit = v.substr(used);
  unit.erase(0, unit.find_first_not_of(' '));
  static const std::vector<std::pair<std::string, double>> units{{"", 1},
                                                                 {"B", 1},
                                                                 {"kB", 1e3},
                                                                 {"KB", 1e3},
                                                                 {"MB", 1e6},
                                                                 {"GB", 1e9},
                                                                 {"TB", 1e12},
                                                                 {"KiB", 1024.0},
                                                                 {"MiB", 1048576.0},
                                                                 {"GiB", 1073741824.0},
                                                                 {"TiB", 1099511627776.0}};
  const auto u = std::find_if(units.begin(), units.end(), [&](const auto& p) { return p.first == unit; });
  if (u == units.end()) throw Error(expected);
  if (x <= 0) throw Error("--memory-budget '" + v + "': must be positive");
  return x * u->second;
}

TuneOptions parse_options(const std::vector<std::string>& args) {
  TuneOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) {
      if (!o.config_path.empty())
        throw Error("qgml tune: unexpected argument '" + a + "' (one config file, then options)");
      o.config_path = a;
      continue;
    }
    std::string key = a.substr(2), value;
    const auto eq = key.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    }
    const bool setting = key.find('.') != std::string::npos;
    const bool own = key == "batches" || key == "epochs-per-trial" || key == "memory-budget" || key == "json";
    if (!setting && !own)
      throw Error("qgml tune: unknown option --" + key + " (options: " + tune_options_list +
                  ", and --section.key value for the config's settings)");
    if (!inline_value) {
      if (i + 1 >= args.size()) throw Error("qgml tune: option --" + key + " needs a value");
      value = args[++i];
    }
    if (setting)
      o.overrides.emplace_back(key, value);
    else if (key == "batches")
      o.batches = parse_batches(value);
    else if (key == "epochs-per-trial")
      o.epochs_per_trial = parse_epochs(value);
    else if (key == "memory-budget")
      o.budget = parse_budget(value);
    else {
      if (value.empty()) throw Error("qgml tune: --json needs a file name");
      o.json = value;
    }
  }
  if (o.config_path.empty()) throw Error("qgml tune needs a config file (see examples/configs/)");
  if (!o.json.empty()) {
    const fs::path parent = fs::path(o.json).parent_path();
    const std::string dir = parent.empty() ? "." : parent.string();
    if (!fs::is_directory(dir)) throw Error("--json " + o.json + ": the directory '" + dir + "' does not exist");
    // Before the trials, not after them: the report replaces a file, never a directory.
    if (std::error_code ec; fs::is_directory(fs::symlink_status(o.json, ec)))
      throw Error("--json " + o.json + ": is a directory; expected the name of the report file to write");
    try {
      check_writable_directory(dir);
    } catch (const Error& e) {
      throw Error("--json " + o.json + ": " + e.what());
    }
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// Memory

struct Budget {
  double bytes = 0;
  std::string source;
};

// The execution space's memory budget (common/memory_budget.hpp).
Budget auto_budget(const Exec& exec) {
  const MemoryBudget b = memory_budget(exec);
  if (!b.known())
    throw Error("--memory-budget auto: cannot determine the available memory" +
                (b.source.empty() ? std::string() : " (" + b.source + ")") + " (give --memory-budget BYTES)");
  return {std::floor(b.bytes), format("auto: %.0f %% of %s %s", 100 * memory_budget_share, b.source.c_str(),
                                      human_bytes(b.available).c_str())};
}

// Trainer::estimate_bytes as fixed + per_point * batch: the batch buffers grow linearly with the
// batch, the gradient, Adam moments, penalty scratch and per-point-of-the-data buffers do not (exact
// for even batches; Kokkos rounds every buffer up to 8 bytes, which odd batches of ints or floats fill
// with up to 4 bytes more).
struct MemoryModel {
  double per_point = 0, fixed = 0;
  double bytes(long batch) const { return fixed + per_point * double(batch); }
  // The largest batch whose buffers fit `budget` (0 if not even one point fits).
  double max_points(double budget) const { return budget < bytes(1) ? 0.0 : std::floor((budget - fixed) / per_point); }
};

template <class Real>
MemoryModel trainer_memory_model(const TrainingSettings& settings, int d, int n, long points) {
  const auto bytes = [&](long batch, long t) {
    TrainingSettings s = settings;
    s.batch_size = int(batch);
    return double(Trainer<Real, Exec>::estimate_bytes(s, d, n, t));
  };
  const long t = std::max(points, 4L);  // the per-point part does not depend on T
  const double per_point = (bytes(4, t) - bytes(2, t)) / 2;
  return points >= 2 ? MemoryModel{per_point, bytes(2, points) - 2 * per_point}
                     : MemoryModel{per_point, bytes(1, points) - per_point};
}

// A fresh copy of the initial configuration for one trial.
template <class Real>
MatrixConfiguration<Real, Exec> fresh_copy(const Exec& exec, const MatrixConfiguration<Real, Exec>& initial) {
  MatrixConfiguration<Real, Exec> c(initial.dimension(), initial.matrix_size(), exec);
  Kokkos::deep_copy(exec, c.matrices(), initial.matrices());
  c.update_square_sum(exec);
  return c;
}

// ---------------------------------------------------------------------------------------------
// Trials

struct Trial {
  long batch = 0;
  bool from_config = false;  // training.batch_size of the config
  bool fits = false;
  bool timed = false;
  double bytes = 0;  // Trainer::bytes() (measured when timed, else the model's)
  int batches_per_epoch = 0;
  std::vector<double> seconds;
  double median = std::numeric_limits<double>::quiet_NaN();
  double points_per_second = std::numeric_limits<double>::quiet_NaN();
  double loss = std::numeric_limits<double>::quiet_NaN();  // of the last timed epoch
  std::string error;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

template <class Real>
void run_trial(const Exec& exec, const MatrixConfiguration<Real, Exec>& initial,
               const typename Trainer<Real, Exec>::points_type& data, TrainingSettings settings, int epochs, Trial& t) {
  try {
    auto config = fresh_copy(exec, initial);
    settings.batch_size = int(t.batch);
    settings.epochs = warmup_epochs + epochs;
    Trainer<Real, Exec> trainer(config, data, settings, exec);
    t.bytes = double(trainer.bytes());
    for (int e = 0; e < warmup_epochs; ++e) trainer.train_epoch();
    for (int e = 0; e < epochs; ++e) {
      const EpochRecord r = trainer.train_epoch();
      t.seconds.push_back(r.seconds);
      t.loss = r.total;
    }
    t.timed = true;
    t.median = median(t.seconds);
    t.points_per_second = double(data.extent(0)) / t.median;
  } catch (const std::exception& e) {
    t.error = e.what();
  }
}

std::string table_row(const Trial& t) {
  const std::string batch = format("%ld%s", t.batch, t.from_config ? "*" : "");
  const std::string fits = t.fits ? "yes" : "no (not run)";
  if (!t.timed)
    return format("%10s %9d %14s %12s %14s %13.1f  %s", batch.c_str(), t.batches_per_epoch, "-", "-",
                  human_bytes(t.bytes).c_str(), t.bytes / double(t.batch),
                  t.error.empty() ? fits.c_str() : ("yes, but failed: " + t.error).c_str());
  return format("%10s %9d %14.4g %12.0f %14s %13.1f  %s", batch.c_str(), t.batches_per_epoch, t.median,
                t.points_per_second, human_bytes(t.bytes).c_str(), t.bytes / double(t.batch), fits.c_str());
}

template <class Real>
int tune(RunSettings s, const TuneOptions& o) {
  const Exec exec;
  // Everything that can fail on bad input happens before the first trial.
  auto data = load_data<Real>(exec, s.data);
  const long points = long(data.extent(0));
  const int d = int(data.extent(1));
  const auto initial = initial_configuration<Real>(exec, s.model, resolve_model_shape(s, d), d);
  const int n = initial.matrix_size();
  for (const long b : o.batches)
    if (b > points)
      throw Error("--batches: " + std::to_string(b) + " is larger than the data set (" + std::to_string(points) +
                  " points)");
  TrainingSettings settings = training_settings(s, "");
  settings.checkpoint_dir.clear();  // tune writes no checkpoints
  settings.checkpoint_every = 0;
  settings.early_stop_tolerance = 0;

  const MemoryModel model = trainer_memory_model<Real>(settings, d, n, points);
  const Budget budget = o.budget >= 0 ? Budget{o.budget, "--memory-budget"} : auto_budget(exec);
  const double max_points = model.max_points(budget.bytes);
  long largest = long(std::min<double>(double(points), max_points));
  if (largest < 1)
    throw Error(
        format("memory budget %s (%.0f bytes, %s) does not fit even a batch of 1 point: the trainer's "
               "buffers need %.0f bytes + %.0f bytes per point",
               human_bytes(budget.bytes).c_str(), budget.bytes, budget.source.c_str(), model.fixed, model.per_point));
  // Verify the answer by allocating it; step down if the allocation fails.
  bool verified = false;
  std::string verify_error;
  double verified_bytes = 0;
  for (int attempt = 0; attempt < 40 && !verified && largest >= 1; ++attempt) {
    try {
      auto config = fresh_copy(exec, initial);
      TrainingSettings s = settings;
      s.batch_size = int(largest);
      const Trainer<Real, Exec> trainer(config, data, s, exec);
      qgml::fence(exec, "qgml::tune: verify allocation");
      verified_bytes = double(trainer.bytes());
      verified = true;
    } catch (const std::exception& e) {
      verify_error = e.what();
      largest = long(0.9 * double(largest));
    }
  }
  if (!verified) throw Error("qgml tune: no batch could be allocated within the budget: " + verify_error);

  // Candidates: the given list, else powers of two from 32 below T, T, the config's batch size and
  // the largest that fits, restricted to those that fit.
  const long config_batch = long(effective_batch_size(settings, points));
  std::set<long> candidates(o.batches.begin(), o.batches.end());
  if (o.batches.empty()) {
    for (long b = 32; b < points; b *= 2) candidates.insert(b);
    candidates.insert(points);
    if (config_batch <= points) candidates.insert(config_batch);
    if (largest < points) candidates.insert(largest);
    for (auto it = candidates.begin(); it != candidates.end();)
      it = model.bytes(*it) <= budget.bytes && *it <= largest ? std::next(it) : candidates.erase(it);
  }

  const char* precision = std::is_same_v<Real, float> ? "float" : "double";
  std::printf("qgml tune: %s: N = %d, D = %d, %ld points, %s, %s; %d warm-up + %d timed epochs per batch size\n",
              o.config_path.c_str(), n, d, points, precision, Exec::name(), warmup_epochs, o.epochs_per_trial);
  std::printf("trainer buffers: %.0f bytes per batch point + %.0f bytes fixed (the data set, %s, is not counted)\n",
              model.per_point, model.fixed, human_bytes(double(data.span()) * sizeof(Real)).c_str());
  std::printf("memory budget: %s (%s); up to %.0f points fit, verified by allocating a batch of %ld%s\n",
              human_bytes(budget.bytes).c_str(), budget.source.c_str(), max_points, largest,
              verify_error.empty() ? "" : (" (larger allocations failed: " + verify_error + ")").c_str());
  std::printf("note: %s\n\n", speed_note);
  std::printf("%10s %9s %14s %12s %14s %13s  %s\n", "batch", "batches", "s/epoch", "points/s", "trainer bytes",
              "bytes/point", "fits");
  std::printf("%10s %9s %14s %12s %14s %13s\n", "", "/epoch", "(median)", "", "", "");
  std::fflush(stdout);

  std::vector<Trial> trials;
  for (const long b : candidates) {
    Trial t;
    t.batch = b;
    t.from_config = o.batches.empty() && b == config_batch;
    t.batches_per_epoch = int((points + b - 1) / b);
    t.bytes = model.bytes(b);
    t.fits = t.bytes <= budget.bytes && b <= largest;
    if (t.fits) run_trial<Real>(exec, initial, data, settings, o.epochs_per_trial, t);
    std::printf("%s\n", table_row(t).c_str());
    std::fflush(stdout);
    trials.push_back(t);
  }
  if (o.batches.empty() && candidates.count(config_batch)) std::printf("* training.batch_size of the config\n");

  // Epoch times that differ by more than 2x within a trial: other work on the cores, or OpenMP
  // barriers waiting for descheduled threads.
  std::string noisy;
  for (const auto& t : trials)
    if (t.timed && *std::max_element(t.seconds.begin(), t.seconds.end()) >
                       2 * *std::min_element(t.seconds.begin(), t.seconds.end()))
      noisy += (noisy.empty() ? "" : ", ") + std::to_string(t.batch);
  if (!noisy.empty())
    std::printf(
        "warning: the epoch times for batch sizes %s vary by more than 2x: the machine is busy (on shared cores set "
        "OMP_WAIT_POLICY=passive; more --epochs-per-trial make the medians steadier)\n",
        noisy.c_str());

  const Trial* fastest = nullptr;
  for (const auto& t : trials)
    if (t.timed && (!fastest || t.median < fastest->median)) fastest = &t;
  const std::string fastest_text =
      fastest ? format("batch %ld (%.4g s/epoch)", fastest->batch, fastest->median) : "none (no candidate was run)";
  std::printf("fastest: %s; largest that fits: %ld points (budget %s)\n", fastest_text.c_str(), largest,
              human_bytes(budget.bytes).c_str());

  if (!o.json.empty()) {
    Json trial_list = Json::array();
    for (const Trial& t : trials) {
      Json seconds = Json::array();
      for (const double e : t.seconds) seconds.push_back(json_number(e));
      Json trial = {{"batch", t.batch},
                    {"batches_per_epoch", t.batches_per_epoch},
                    {"config_batch", t.from_config},
                    {"fits", t.fits},
                    {"timed", t.timed},
                    {"trainer_bytes", json_number(t.bytes)},
                    {"bytes_per_batch_point", json_number(t.bytes / double(t.batch))},
                    {"epoch_seconds", seconds},
                    {"median_epoch_seconds", json_number(t.median)},
                    {"points_per_second", json_number(t.points_per_second)},
                    {"last_epoch_loss", json_number(t.loss)}};
      if (!t.error.empty()) trial["error"] = t.error;
      trial_list.push_back(std::move(trial));
    }
    const Json memory = {{"budget_bytes", json_number(budget.bytes)},
                         {"budget_source", budget.source},
                         {"bytes_per_point", json_number(model.per_point)},
                         {"fixed_bytes", json_number(model.fixed)},
                         {"data_bytes", json_number(double(data.span()) * sizeof(Real))},
                         {"max_points_in_budget", json_number(max_points)},
                         {"largest_fitting_batch", largest},
                         {"verified_bytes", json_number(verified_bytes)}};
    write_json_file(
        o.json,
        {{"command", "tune"},
         {"config", o.config_path},
         {"execution_space", Exec::name()},
         {"precision", precision},
         {"D", d},
         {"N", n},
         {"points", points},
         {"warmup_epochs", warmup_epochs},
         {"epochs_per_trial", o.epochs_per_trial},
         {"memory", memory},
         {"trials", trial_list},
         {"fastest", fastest ? Json{{"batch", fastest->batch}, {"median_epoch_seconds", json_number(fastest->median)}}
                             : Json(nullptr)},
         {"largest_fitting_batch", largest},
         {"note", speed_note}});
    std::printf("trials written to %s\n", o.json.c_str());
  }
  int failed = 0;
  for (const auto& t : trials)
    if (t.fits && !t.timed) {
      std::fprintf(stderr, "qgml tune: error: batch %ld failed: %s\n", t.batch, t.error.c_str());
      ++failed;
    }
  return failed ? 1 : 0;
}

}  // namespace

int tune_command(const std::vector<std::string>& args) {
  const TuneOptions o = parse_options(args);
  const RunSettings s = read_run_settings(load_config(o.config_path, o.overrides));
  if (s.model.single_precision) return tune<float>(s, o);
  return tune<double>(s, o);
}

}  // namespace qgml::app
