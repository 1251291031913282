// Training (`qgml train` in process: qgml::app::run_train) and the run directories it writes.
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "qgml/io/configuration_io.hpp"
#include "qgml/train/training_settings.hpp"

#include "c_api_internal.hpp"
#include "train/train_run.hpp"

namespace fs = std::filesystem;

namespace {

using qgml::capi::Failure;
using qgml::capi::require;
using qgml::capi::require_pointer;

std::unique_ptr<qgml_run> open_run(const std::string& dir, const char* f) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Failure{QGML_ERROR_IO, std::string(f) + ": '" + dir + "' is not a directory"};
  if (!fs::exists(fs::path(dir) / "config.yaml", ec))
    throw Failure{QGML_ERROR_IO, std::string(f) + ": '" + dir + "' has no config.yaml (not a qgml run directory)"};
  auto run = std::make_unique<qgml_run>();
  run->dir = dir;
  const fs::path history = fs::path(dir) / "history.csv";
  if (fs::exists(history, ec)) {
    for (const qgml::EpochRecord& r : qgml::read_history_csv(history.string())) {
      run->loss.push_back(r.total);
      run->reconstruction.push_back(r.reconstruction);
      run->fluctuation.push_back(r.fluctuation);
    }
  }
  return run;
}

// The points of qgml_train / qgml_resume, as the program's data.array source (or none).
struct Points {
  qgml::app::PointsInMemory memory;
  std::string description;
};

Points points_argument(const void* points, std::int64_t t, int d, qgml_dtype dtype, const char* f) {
  Points p;
  if (!points) return p;
  qgml::capi::require_points(points, t, d, dtype, f);
  p.memory.values = points;
  p.memory.rows = t;
  p.memory.columns = d;
  p.memory.single_precision = dtype == QGML_FLOAT32;
  p.description =
      "C array, " + std::to_string(t) + " x " + std::to_string(d) + (dtype == QGML_FLOAT32 ? " float32" : " float64");
  return p;
}

int train(const char* f, qgml::app::TrainRequest& request, const Points& points, int quiet, qgml_stop_callback stop,
          void* user_data, qgml_run** out) {
  return qgml::capi::guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    qgml::capi::require_kokkos(f);
    request.quiet = quiet != 0;
    if (points.memory.values) request.points = &points.memory;
    if (stop) request.stop_requested = [stop, user_data] { return stop(user_data) != 0; };
    const qgml::app::TrainOutcome outcome = qgml::app::run_train(request);
    *out = qgml::capi::hand_out(open_run(outcome.run_dir, f));
    if (outcome.exit_code == 130)
      throw Failure{QGML_ERROR_INTERRUPTED, std::string(f) + ": stopped by the stop callback; the run directory '" +
                                                outcome.run_dir + "' continues with qgml_resume"};
    if (outcome.exit_code != 0)
      throw Failure{QGML_ERROR_RUNTIME, std::string(f) + ": training ended with exit code " +
                                            std::to_string(outcome.exit_code) + " (run directory '" + outcome.run_dir +
                                            "')"};
  });
}

// The run's dimension_summary.json.
nlohmann::json run_summary(const qgml_run* r, const char* f) {
  qgml::capi::require_handle(r, f, "run");
  const fs::path summary = fs::path(r->dir) / "dimension_summary.json";
  std::ifstream in(summary);
  if (!in)
    throw Failure{QGML_ERROR_IO, std::string(f) + ": run directory '" + r->dir +
                                     "' has no dimension_summary.json (train with analysis.enabled = true)"};
  try {
    nlohmann::json j;
    in >> j;
    return j;
  } catch (const nlohmann::json::exception& e) {
    throw Failure{QGML_ERROR_IO, std::string(f) + ": '" + summary.string() + "': " + e.what()};
  }
}

template <class T>
T summary_field(const nlohmann::json& j, const char* key, const qgml_run* r, const char* f) {
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw Failure{QGML_ERROR_IO, std::string(f) + ": the dimension_summary.json of '" + r->dir + "': " + e.what()};
  }
}
}  // namespace

using qgml::capi::guarded;

namespace qgml::capi {

qgml::HostMatrices run_matrices(const qgml_run* r, const char* f) {
  const fs::path final_matrices = fs::path(r->dir) / "final_matrices.npy";
  std::error_code ec;
  if (fs::exists(final_matrices, ec)) return qgml::load_matrices(final_matrices.string());
  // An interrupted run before its outputs: the checkpoint LATEST names.
  const fs::path checkpoints = fs::path(r->dir) / "checkpoints";
  std::ifstream latest(checkpoints / "LATEST");
  std::string epoch_dir;
  if (!(latest >> epoch_dir))
    throw Failure{QGML_ERROR_IO,
                  std::string(f) + ": run directory '" + r->dir + "' has neither final_matrices.npy nor a checkpoint"};
  return qgml::load_matrices((checkpoints / epoch_dir / "matrices.npy").string());
}

}  // namespace qgml::capi

extern "C" {

int qgml_train(const qgml_settings* s, const void* points, int64_t t, int d, qgml_dtype dtype, int quiet,
               qgml_stop_callback stop, void* user_data, qgml_run** out) {
  const char* f = "qgml_train";
  Points p;
  qgml::app::TrainRequest request;
  const int checked = guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    require_pointer(out, f, "out");
    *out = nullptr;
    qgml::capi::require_handle(s, f, "settings");
    p = points_argument(points, t, d, dtype, f);
    request.config_path = s->yaml_path;
    request.overrides = s->overrides;
    if (points) request.overrides.emplace_back("data.array", p.description);
  });
  if (checked != QGML_OK) return checked;
  return train(f, request, p, quiet, stop, user_data, out);
}

int qgml_resume(const char* run_dir, const void* points, int64_t t, int d, qgml_dtype dtype, int quiet,
                qgml_stop_callback stop, void* user_data, qgml_run** out) {
  const char* f = "qgml_resume";
  Points p;
  qgml::app::TrainRequest request;
  const int checked = guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    require_pointer(out, f, "out");
    *out = nullptr;
    require_pointer(run_dir, f, "run_dir");
    require(*run_dir != '\0', f, "run_dir is empty");
    p = points_argument(points, t, d, dtype, f);
    request.resume_dir = run_dir;
  });
  if (checked != QGML_OK) return checked;
  return train(f, request, p, quiet, stop, user_data, out);
}

int qgml_run_open(const char* run_dir, qgml_run** out) {
  const char* f = "qgml_run_open";
  return guarded(f, QGML_ERROR_IO, [&] {
    require_pointer(out, f, "out");
    *out = nullptr;
    require_pointer(run_dir, f, "run_dir");
    *out = qgml::capi::hand_out(open_run(run_dir, f));
  });
}

int qgml_run_directory(const qgml_run* r, char* buf, size_t size, size_t* needed) {
  const char* f = "qgml_run_directory";
  return guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    qgml::capi::require_handle(r, f, "run");
    qgml::capi::copy_text(r->dir, buf, size, needed, f);
  });
}

int qgml_run_model(const qgml_run* r, qgml_model** out) {
  const char* f = "qgml_run_model";
  return guarded(f, QGML_ERROR_IO, [&] {
    require_pointer(out, f, "out");
    *out = nullptr;
    qgml::capi::require_handle(r, f, "run");
    auto model = std::make_unique<qgml_model>();
    model->matrices = qgml::capi::run_matrices(r, f);
    *out = qgml::capi::hand_out(std::move(model));
  });
}

int qgml_run_history(const qgml_run* r, int* epochs, double* loss, double* reconstruction, double* fluctuation) {
  const char* f = "qgml_run_history";
  return guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    qgml::capi::require_handle(r, f, "run");
    if (epochs) *epochs = int(r->loss.size());
    for (std::size_t e = 0; e < r->loss.size(); ++e) {
      if (loss) loss[e] = r->loss[e];
      if (reconstruction) reconstruction[e] = r->reconstruction[e];
      if (fluctuation) fluctuation[e] = r->fluctuation[e];
    }
  });
}

int qgml_run_dimension(const qgml_run* r, int* dimension, int* uncertain) {
  const char* f = "qgml_run_dimension";
  return guarded(f, QGML_ERROR_IO, [&] {
    const nlohmann::json j = run_summary(r, f);
    if (dimension) *dimension = summary_field<int>(j, "mode", r, f);
    if (uncertain) *uncertain = summary_field<bool>(j, "uncertain", r, f) ? 1 : 0;
  });
}

int qgml_run_dimension_error(const qgml_run* r, double* error, int* low, int* high) {
  const char* f = "qgml_run_dimension_error";
  return guarded(f, QGML_ERROR_IO, [&] {
    const nlohmann::json j = run_summary(r, f);
    if (error) *error = summary_field<double>(j, "error", r, f);
    const auto interval = summary_field<std::vector<int>>(j, "interval", r, f);
    if (interval.size() != 2)
      throw Failure{QGML_ERROR_IO, std::string(f) + ": the dimension_summary.json of '" + r->dir +
                                       "': \"interval\" is not [low, high]"};
    if (low) *low = interval[0];
    if (high) *high = interval[1];
  });
}

int qgml_run_destroy(qgml_run* r) {
  return guarded("qgml_run_destroy", QGML_ERROR_INVALID_ARGUMENT, [&] {
    if (!r) return;
    qgml::capi::unregister_handle(r, qgml::capi::HandleKind::run, "qgml_run_destroy", "run");
    delete r;
  });
}

}  // extern "C"
