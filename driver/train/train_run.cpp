// `qgml train` as a function (train_run.hpp): the inputs, the run directory, the resume, the training,
// the outputs and the analysis of a run.
#include "train/train_run.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/train/trainer.hpp"

#include "analysis/analysis.hpp"
#include "common/format.hpp"
#include "common/json_file.hpp"
#include "data/supervised_data.hpp"
#include "run/parallel.hpp"
#include "run/run_directory.hpp"
#include "run/run_fingerprint.hpp"
#include "run/run_resume.hpp"
#include "settings/config.hpp"
#include "settings/run_settings.hpp"
#include "settings/run_setup.hpp"
#include "train/epoch_monitor.hpp"
#include "train/run_inputs.hpp"
#include "train/train_inputs.hpp"
#include "train/train_log.hpp"
#include "train/train_outputs.hpp"
#include "train/train_profiler.hpp"
#include "train/train_progress.hpp"
#include "train/train_run_directory.hpp"
#include "train/train_signals.hpp"
#include "train/train_spaces.hpp"

namespace qgml::app {

namespace fs = std::filesystem;

namespace {

template <class Real, class DataSpace>
int train_in(const Config& resolved, const RunSettings& s, const TrainRequest& request, Log& log, bool monitored,
             RunInputs<Real, DataSpace>& in, const std::string& run_dir);

// A relative path setting (`path`, the value of `key` in c) made absolute, once, at the first run (its
// config.yaml then names the same file from any directory).
void make_absolute(const Config& c, RunSettings& s, const std::string& key, std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return;
  path = fs::absolute(path).lexically_normal().string();
  s.choose(key, path, c.origin(key));
}

// c: the configuration as given; s: its settings, which the run completes with its choices.
template <class Real, class DataSpace>
TrainOutcome train(const Config& c, RunSettings s, const std::string& config_path, const TrainRequest& request) {
  const std::string& resume_dir = request.resume_dir;
  const bool quiet = request.quiet;
  const Exec exec;
  // With MPI, every rank trains on its shard of the points; rank 0 alone prints and writes files.
  Communicator& comm = communicator();
  use_gpu_aware_mpi(s.gpu_aware_mpi);
  const bool root = comm.rank() == 0;
  Log log(quiet || !root);
  // The monitor is installed first so that its memory high-water mark sees every allocation.
  const ProfilerGuard profiler(s.profiling);
  const bool monitored = profiler.active;
  if (resume_dir.empty()) {
    make_absolute(c, s, "data.file", s.data.file);
    make_absolute(c, s, "model.load", s.model.load);
    if (!s.output.name.empty()) check_run_name(s.output.name);
  } else {
    run_collectively(comm, [&] {
      if (!root) return;
      refuse_links(resume_dir, "run directory");
      const std::string checkpoints = (fs::path(resume_dir) / "checkpoints").string();
      std::error_code ec;
      if (fs::is_directory(fs::symlink_status(checkpoints, ec))) refuse_links(checkpoints, "checkpoint directory");
    });
  }
  auto in = prepare_inputs<Real, DataSpace>(exec, s, comm, request.points);
  const Config resolved = resolved_config(c, s);
  const std::string run_dir = open_run_directory(resolved, s, config_path, resume_dir, comm);
  // Held until the run ends: one process at a time in a run directory.
  RunLock lock;
  run_collectively(comm, [&] {
    if (root) lock = RunLock(run_dir);
  });
  run_collectively(comm, [&] {
    if (root) log.open((fs::path(run_dir) / "log.txt").string());
  });
  // Under the lock: the temporaries that an interrupted write left in the run directory and its
  // checkpoints (the pid in their name has ended) are removed.
  if (!resume_dir.empty())
    run_collectively(comm, [&] {
      if (!root) return;
      for (const std::string& path : remove_stale_temporaries(run_dir, {"checkpoints"}))
        log.line("removed " + path + ": a temporary file of an interrupted write (its process has ended)");
    });
  // A fatal error from here on is also recorded in the run's log.txt (main prints it to stderr).
  try {
    return {train_in<Real, DataSpace>(resolved, s, request, log, monitored, in, run_dir), run_dir};
  } catch (const std::exception& e) {
    log.file_line(std::string("error: ") + e.what());
    throw;
  }
}

template <class Real, class DataSpace>
int train_in(const Config& resolved, const RunSettings& s, const TrainRequest& request, Log& log, bool monitored,
             RunInputs<Real, DataSpace>& in, const std::string& run_dir) {
  const std::string& resume_dir = request.resume_dir;
  const AcceptedChanges& accepted = request.accepted_changes;
  const auto stop = [&request] {
    return (request.handle_signals && stop_requested.load()) || (request.stop_requested && request.stop_requested());
  };
  const Exec exec;
  Communicator& comm = communicator();
  const bool root = comm.rank() == 0;
  const bool quiet = log.quiet();
  const TrainingSettings settings = training_settings(s, run_dir);
  std::optional<Trainer<Real, Exec, DataSpace>> trainer_storage;
  run_collectively(comm, [&] { trainer_storage.emplace(in.config, in.data, settings, exec, comm, in.total_points); });
  Trainer<Real, Exec, DataSpace>& trainer = *trainer_storage;
  if (in.supervised) {
    if (in.validation.extent(0) > 0) trainer.set_validation(in.validation);
    if (in.transform.task == Task::regression)
      trainer.set_target_units(in.transform.target_mean, in.transform.target_scale);
  }
  const CheckpointFingerprint fingerprint{
      data_hash(exec, in.data, in.total_points, shard_range(in.total_points, comm.size(), comm.rank()).begin, comm),
      fingerprint_settings(resolved)};
  trainer.set_fingerprint(fingerprint);
  // A run stopped before its epoch-0 checkpoint starts from epoch 0 with its own config.yaml.
  const bool fresh = resume_dir.empty() || no_checkpoint_yet(settings.checkpoint_dir);
  std::optional<AcceptedResume> accepted_resume;
  if (!resume_dir.empty())
    accepted_resume = check_resume(run_dir, settings.checkpoint_dir, fresh, fingerprint, accepted, log, comm);
  // Nothing is written to the run before the checkpoint has been loaded: a change that cannot apply
  // (another N or D, another seed) leaves the run resumable as it was.
  if (!fresh) trainer.load_checkpoint(settings.checkpoint_dir);
  if (accepted_resume) {
    record_resume(resolved, run_dir, *accepted_resume, log, comm);
    if (fresh) log.line("resume: " + run_dir + " has no checkpoint yet; starting it from epoch 0");
  }
  if (!fresh) {
    log.line(format("resuming %s at epoch %d of %d", run_dir.c_str(), trainer.epoch(), settings.epochs));
    if (trainer.already_stopped_early()) {
      log.line(
          format("the run already stopped early at epoch %d (training.early_stop, training.patience): nothing "
                 "to train; continue with --training.epochs above its limit, or with --training.early_stop 0 "
                 "and --training.patience 0",
                 trainer.epoch()));
      return 0;
    }
  }
  const long points = long(in.total_points);
  log.line(format("qgml train: N = %d%s, D = %d, %ld points, batch %d, %s epochs, w = %g, %s, %s", in.n,
                  in.n_source.c_str(), in.d, points, trainer.batch_size(),
                  settings.early_stop_tolerance > 0 || settings.validation_patience > 0
                      ? format("at most %d", settings.epochs).c_str()
                      : std::to_string(settings.epochs).c_str(),
                  settings.loss.w, std::is_same_v<Real, float> ? "float" : "double", Exec::name()));
  if (in.supervised)
    log.line(format(
        "task %s: loss %s%s, %s", to_string(settings.task).c_str(), to_string(settings.supervised.loss).c_str(),
        settings.supervised.lambda > 0 ? format(" + %g (d^2 + w sigma^2)", settings.supervised.lambda).c_str() : "",
        in.supervised_source.c_str()));
  if (fresh)
    for (const std::string& line : in.automatic) log.line(line);
  if (settings.early_stop_tolerance > 0)
    log.line(
        format("early stop: when the mean loss of %d epochs changes by at most %g relative to the %d before "
               "(training.early_stop, training.early_stop_window)",
               settings.early_stop_window, settings.early_stop_tolerance, settings.early_stop_window));
  if (settings.validation_patience > 0)
    log.line(
        format("validation patience: stop %d epochs after the lowest mean validation loss and end with that "
               "epoch's operators (training.patience)",
               settings.validation_patience));
  log.line("run directory: " + run_dir);
  if (comm.size() > 1)
    log.line(format("data parallel: %d ranks, %ld to %ld points each, %zu bytes per gradient all-reduce (%s)",
                    comm.size(), points / comm.size(), (points + comm.size() - 1) / comm.size(),
                    trainer.bytes_per_allreduce(), s.gpu_aware_mpi ? "device buffers" : "through host memory"));
  if (!monitored) log.line("an external Kokkos tool is loaded: qgml's own profiler and monitor are off");

  bool interrupted = false;
  EpochMonitor monitor(log, settings.epochs, !quiet && root && ::isatty(::fileno(stdout)), monitored);
  {
    std::optional<StopOnSignal> stop_on_signal;
    if (request.handle_signals) stop_on_signal.emplace();
    trainer.set_stop_query(stop);
    monitor.begin(trainer.epoch());
    trainer.train([&](const EpochRecord& r) {
      monitor.record(r);
      if (request.on_epoch) request.on_epoch(r);
      return !stop();
    });
    monitor.end();
    std::int64_t stop_flag = stop() || trainer.interrupted() ? 1 : 0;
    comm.allreduce_max(&stop_flag, 1);  // every rank takes the same exit
    interrupted = stop_flag != 0;
  }
  // training.patience: the outputs hold the best epoch's operators (the checkpoints keep the trajectory).
  const bool patience_stop = settings.validation_patience > 0 && trainer.best_epoch() > 0 &&
                             trainer.epoch() - trainer.best_epoch() >= settings.validation_patience;
  const int kept_epoch = !interrupted && settings.validation_patience > 0 && trainer.restore_best() > 0
                             ? trainer.best_epoch()
                             : trainer.epoch();
  write_outputs(run_dir, trainer.history(), in.config, exec, comm);
  const double train_seconds = monitor.train_seconds();
  if (comm.size() > 1)
    log.line(format("communication: %.3f s in gradient all-reduces (%.1f %% of training)",
                    trainer.communication_seconds(),
                    train_seconds > 0 ? 100 * trainer.communication_seconds() / train_seconds : 0.0));
  if (monitored && root) monitor.write(run_dir, s.profiling, quiet);
  if (interrupted) {
    log.line(
        format("interrupted: epoch %d is the last complete one, its checkpoint is LATEST; continue with qgml "
               "train --resume %s",
               trainer.epoch(), run_dir.c_str()));
    return 130;
  }
  const EpochRecord last = trainer.history().empty() ? EpochRecord{} : trainer.history().back();
  // No epoch ran (training.epochs = 0): there is no final loss to print, only the initial configuration.
  const bool trained = !trainer.history().empty();
  const std::string untrained = format(
      "no training: training.epochs = %d, no epoch ran; the outputs hold the initial configuration", settings.epochs);
  const bool stopped_early = trainer.stopped_early();
  if (stopped_early && patience_stop)
    log.line(
        format("the validation loss has not improved for %d epochs: stopped after epoch %d of at most %d "
               "(training.patience)",
               settings.validation_patience, trainer.epoch(), settings.epochs));
  else if (stopped_early)
    log.line(
        format("the loss has plateaued: stopped after epoch %d of at most %d (training.early_stop %g over %d "
               "epochs)",
               trainer.epoch(), settings.epochs, settings.early_stop_tolerance, settings.early_stop_window));
  if (in.supervised) {
    if (!trained) {
      log.line(untrained);
    } else {
      log.line(format("final loss %.10g (supervised %.10g) after %d epochs, %.1f s", last.total, last.supervised,
                      trainer.epoch(), train_seconds));
      log.line("final train " + metrics_text(last.train) +
               (in.validation.extent(0) > 0 ? "; validation " + metrics_text(last.validation) : std::string()));
      if (const std::string t = per_output_text(last.train, in.transform); !t.empty()) log.line("final train " + t);
      if (const std::string t = per_output_text(last.validation, in.transform); !t.empty())
        log.line("final validation " + t);
    }
    if (kept_epoch != trainer.epoch()) {
      const EpochRecord& kept = trainer.history()[std::size_t(kept_epoch - 1)];
      log.line(format("kept the operators of epoch %d, the lowest mean validation loss (%.6g): validation ", kept_epoch,
                      trainer.best_validation_loss()) +
               metrics_text(kept.validation) + " (training.patience)");
      if (const std::string t = per_output_text(kept.validation, in.transform); !t.empty())
        log.line("kept epoch's validation " + t);
    }
    if (root)
      write_supervised_transform((fs::path(run_dir) / "supervised.json").string(), in.transform, in.d, kept_epoch);
    log.line("predict with: qgml predict --run " + run_dir + " --data FILE.csv");
    log.line("outputs: " + run_dir);
    return 0;
  }
  if (!trained)
    log.line(untrained);
  else
    log.line(format("final loss %.10g (reconstruction %.10g, fluctuation %.10g) after %d epochs, %.1f s", last.total,
                    last.reconstruction, last.fluctuation, trainer.epoch(), train_seconds));
  if (root && !in.standardization.mean.empty()) {
    Json st = {{"mean", in.standardization.mean},
               {"scale", in.standardization.scale},
               {"note", "the run's points, xbar and matrices are in standardised coordinates (x - mean) / scale"}};
    write_json_file((fs::path(run_dir) / "standardization.json").string(), st);
  }
  if (s.analysis.enabled) {
    const DimensionSummary summary = analyze<Real>(exec, in.config, in.data, s.analysis, run_dir, comm,
                                                   JsonFields()
                                                       .add("N", in.n)
                                                       .add("N_origin", s.model.n_origin)
                                                       .add("w", settings.loss.w)
                                                       .add("epochs", trainer.epoch())
                                                       .add("max_epochs", settings.epochs)
                                                       .add("stopped_early", stopped_early)
                                                       .add("standardized", !in.standardization.mean.empty())
                                                       .add("train_seconds", train_seconds));
    for (const std::string& line : summary_lines(summary)) log.line(line);
    const std::string result = format("estimated intrinsic dimension: %d%s", summary.mode,
                                      summary.uncertain ? " (uncertain: see the summary)" : "");
    log.line(result);
    if (log.quiet() && root && request.print_result) std::printf("%s\n", result.c_str());
  }
  if (s.output.plots && root) plot_run(run_dir, log.quiet());
  log.line("outputs: " + run_dir);
  return 0;
}

}  // namespace

TrainOutcome run_train(const TrainRequest& request) {
  if (!request.resume_dir.empty() && !request.config_path.empty())
    throw Error("--resume takes the run directory's own config; give no config or data file");
  std::vector<std::pair<std::string, std::string>> overrides = request.overrides;
  std::string config_path = request.config_path;
  if (!request.resume_dir.empty()) {
    config_path = (fs::path(request.resume_dir) / "config.yaml").string();
    if (!fs::exists(config_path))
      throw Error("--resume " + request.resume_dir + ": no config.yaml there (not a qgml run directory)");
  }
  const Config c = load_config(config_path, overrides);
  const RunSettings s = read_run_settings(c);
  const std::string path = request.resume_dir.empty() ? config_path : "";
  const bool on_host = s.data.placement == "host" && !std::is_same_v<HostDataSpace, Exec::memory_space>;
  if (s.model.single_precision)
    return on_host ? train<float, HostDataSpace>(c, s, path, request)
                   : train<float, Exec::memory_space>(c, s, path, request);
  return on_host ? train<double, HostDataSpace>(c, s, path, request)
                 : train<double, Exec::memory_space>(c, s, path, request);
}

}  // namespace qgml::app
