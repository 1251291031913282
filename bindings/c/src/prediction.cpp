// Supervised prediction (docs/supervised.md, sections 1 and 11) through the program's own code
// (qgml::app::predict_supervised): from a run directory, or from a model and a supervised.json's text.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "c_api_internal.hpp"
#include "data/supervised_prediction.hpp"

namespace fs = std::filesystem;

namespace {

using qgml::capi::Failure;
using qgml::capi::guarded;
using qgml::capi::require;
using qgml::capi::require_pointer;

void predict(const qgml::HostMatrices& operators, const std::string& json, const std::string& json_source,
             const std::string& matrices_source, const void* points, std::int64_t t, int d, qgml_dtype dtype,
             double* prediction, double* probability, double* output, std::int64_t* failed, const char* f) {
  qgml::capi::require_points(points, t, d, dtype, f);
  require_pointer(prediction, f, "prediction");
  qgml::capi::require_finite_points(points, t, d, dtype, f);
  int features = 0;
  const qgml::app::SupervisedTransform tr = qgml::app::parse_supervised_transform(json, json_source, features);
  require(d == features, f,
          "the points have d = " + std::to_string(d) + " features, the model " + std::to_string(features));
  require(tr.task == qgml::Task::classification || probability == nullptr, f,
          "probability must be NULL for a regression model");
  qgml::capi::require_kokkos(f);
  qgml::HostData x;
  x.rows = int(t);
  x.cols = d;
  x.values.resize(std::size_t(t) * std::size_t(d));
  for (std::size_t i = 0; i < x.values.size(); ++i)
    x.values[i] =
        dtype == QGML_FLOAT32 ? double(static_cast<const float*>(points)[i]) : static_cast<const double*>(points)[i];
  const qgml::app::SupervisedPrediction p = qgml::app::predict_supervised(tr, operators, x, matrices_source);
  std::memcpy(prediction, p.value.data(), p.value.size() * sizeof(double));
  if (output) std::memcpy(output, p.model_output.data(), p.model_output.size() * sizeof(double));
  if (probability) std::memcpy(probability, p.probability.data(), p.probability.size() * sizeof(double));
  if (failed) *failed = p.failed;
}

// The text of a run directory's supervised.json; QGML_ERROR_IO naming it where it cannot be read.
std::string run_supervised_json(const qgml_run* r, const fs::path& path, const char* f) {
  std::ifstream in(path);
  if (!in)
    throw Failure{QGML_ERROR_IO, std::string(f) + ": '" + path.string() +
                                     "' cannot be opened (not the run directory of a regression or "
                                     "classification run?)"};
  (void)r;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void shape(const std::string& json, const std::string& source, int* d, int* outputs, int* classes) {
  int features = 0;
  const qgml::app::SupervisedTransform tr = qgml::app::parse_supervised_transform(json, source, features);
  if (d) *d = features;
  if (outputs) *outputs = tr.outputs();
  if (classes) *classes = int(tr.classes.size());
}

}  // namespace

extern "C" {

int qgml_supervised_shape(const char* supervised_json, int* d, int* outputs, int* classes) {
  const char* f = "qgml_supervised_shape";
  return guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    require_pointer(supervised_json, f, "supervised_json");
    shape(supervised_json, "supervised_json", d, outputs, classes);
  });
}

int qgml_run_supervised_shape(const qgml_run* r, int* d, int* outputs, int* classes) {
  const char* f = "qgml_run_supervised_shape";
  return guarded(f, QGML_ERROR_IO, [&] {
    qgml::capi::require_handle(r, f, "run");
    const fs::path json_path = fs::path(r->dir) / "supervised.json";
    shape(run_supervised_json(r, json_path, f), json_path.string(), d, outputs, classes);
  });
}

int qgml_run_predict(const qgml_run* r, const void* points, int64_t t, int d, qgml_dtype dtype, double* prediction,
                     double* probability, double* output, int64_t* failed) {
  const char* f = "qgml_run_predict";
  return guarded(f, QGML_ERROR_IO, [&] {
    qgml::capi::require_handle(r, f, "run");
    const fs::path json_path = fs::path(r->dir) / "supervised.json";
    const std::string json = run_supervised_json(r, json_path, f);
    const qgml::HostMatrices operators = qgml::capi::run_matrices(r, f);
    predict(operators, json, json_path.string(), "the model of run '" + r->dir + "'", points, t, d, dtype, prediction,
            probability, output, failed, f);
  });
}

int qgml_predict(const qgml_model* m, const char* supervised_json, const void* points, int64_t t, int d,
                 qgml_dtype dtype, double* prediction, double* probability, double* output, int64_t* failed) {
  const char* f = "qgml_predict";
  return guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    qgml::capi::require_handle(m, f, "model");
    require_pointer(supervised_json, f, "supervised_json");
    predict(m->matrices, supervised_json, "supervised_json", "the model", points, t, d, dtype, prediction, probability,
            output, failed, f);
  });
}

}  // extern "C"
