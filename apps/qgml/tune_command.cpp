// qgml tune CONFIG.yaml [--section.key value ...] [--batches 64,128,...] [--epochs-per-trial 3]
//                       [--memory-budget BYTES|auto] [--json FILE]
//
// Batch-size tuning on the data set and model of a training config (tune_batches, driver/tune/): for
// each candidate batch size a Trainer on a fresh copy of the initial configuration runs one warm-up
// epoch and the timed epochs. This command parses the options and prints the report: the median epoch
// time, points/s and the trainer's buffer bytes per candidate, the fastest batch and the largest batch
// whose buffers fit in the memory budget. Speed only: how well a batch size trains is for qgml train to
// show.
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

#include "commands.hpp"
#include "common/format.hpp"
#include "common/json_file.hpp"
#include "run/run_directory.hpp"
#include "settings/config.hpp"
#include "settings/run_settings.hpp"
#include "tune/batch_tuning.hpp"

namespace qgml::app {

namespace fs = std::filesystem;

namespace {

constexpr const char* speed_note =
    "tune measures speed only: every batch's loss and gradient are means over its points, so their scale "
    "does not depend on the batch size, but smaller batches take more Adam steps per epoch with noisier "
    "gradients; which batch size trains best (full batch or mini-batches) is for qgml train to show";

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
  TuneRequest request;
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
      o.request.batches = parse_batches(value);
    else if (key == "epochs-per-trial")
      o.request.epochs_per_trial = parse_epochs(value);
    else if (key == "memory-budget")
      o.request.budget = parse_budget(value);
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
// The report

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

int tune(const RunSettings& s, const TuneOptions& o) {
  const char* precision = s.model.single_precision ? "float" : "double";
  const auto on_plan = [&](const TunePlan& plan) {
    const MemoryModel& model = plan.model;
    std::printf("qgml tune: %s: N = %d, D = %d, %ld points, %s, %s; %d warm-up + %d timed epochs per batch size\n",
                o.config_path.c_str(), plan.n, plan.d, plan.points, precision, Kokkos::DefaultExecutionSpace::name(),
                tune_warmup_epochs, o.request.epochs_per_trial);
    std::printf("trainer buffers: %.0f bytes per batch point + %.0f bytes fixed (the data set, %s, is not counted)\n",
                model.per_point, model.fixed, human_bytes(plan.data_bytes).c_str());
    std::printf("memory budget: %s (%s); up to %.0f points fit, verified by allocating a batch of %ld%s\n",
                human_bytes(plan.budget).c_str(), plan.budget_source.c_str(), plan.max_points, plan.largest,
                plan.verify_error.empty() ? "" : (" (larger allocations failed: " + plan.verify_error + ")").c_str());
    std::printf("note: %s\n\n", speed_note);
    std::printf("%10s %9s %14s %12s %14s %13s  %s\n", "batch", "batches", "s/epoch", "points/s", "trainer bytes",
                "bytes/point", "fits");
    std::printf("%10s %9s %14s %12s %14s %13s\n", "", "/epoch", "(median)", "", "", "");
    std::fflush(stdout);
  };
  const auto on_trial = [](const Trial& t) {
    std::printf("%s\n", table_row(t).c_str());
    std::fflush(stdout);
  };
  const TuneResult result = tune_batches(s, o.request, on_plan, on_trial);
  const TunePlan& plan = result.plan;
  const MemoryModel& model = plan.model;
  const std::vector<Trial>& trials = result.trials;
  const long largest = plan.largest, config_batch = plan.config_batch;
  if (o.request.batches.empty() &&
      std::find(plan.candidates.begin(), plan.candidates.end(), config_batch) != plan.candidates.end())
    std::printf("* training.batch_size of the config\n");

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

  const Trial* fastest = result.fastest();
  const std::string fastest_text =
      fastest ? format("batch %ld (%.4g s/epoch)", fastest->batch, fastest->median) : "none (no candidate was run)";
  std::printf("fastest: %s; largest that fits: %ld points (budget %s)\n", fastest_text.c_str(), largest,
              human_bytes(plan.budget).c_str());

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
    const Json memory = {{"budget_bytes", json_number(plan.budget)},
                         {"budget_source", plan.budget_source},
                         {"bytes_per_point", json_number(model.per_point)},
                         {"fixed_bytes", json_number(model.fixed)},
                         {"data_bytes", json_number(plan.data_bytes)},
                         {"max_points_in_budget", json_number(plan.max_points)},
                         {"largest_fitting_batch", largest},
                         {"verified_bytes", json_number(plan.verified_bytes)}};
    write_json_file(
        o.json,
        {{"command", "tune"},
         {"config", o.config_path},
         {"execution_space", Kokkos::DefaultExecutionSpace::name()},
         {"precision", precision},
         {"D", plan.d},
         {"N", plan.n},
         {"points", plan.points},
         {"warmup_epochs", tune_warmup_epochs},
         {"epochs_per_trial", o.request.epochs_per_trial},
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
  return tune(read_run_settings(load_config(o.config_path, o.overrides)), o);
}

}  // namespace qgml::app
