// The bindings of the computations on caller-owned points (evaluate, quantum_metric, dimension,
// predict) and of sampling a run (sample, sample_resume).
#include <algorithm>
#include <cstdint>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <optional>
#include <string>
#include <vector>

#include "qgml/c_api.h"

#include "arrays.hpp"
#include "bindings.hpp"
#include "c_calls.hpp"
#include "handles.hpp"

using namespace nb::literals;

namespace qgml_python {

namespace {

template <class Real>
double evaluate(const Model& m, const Points<Real>& x, double w, std::optional<Out<Real>> xbar,
                std::optional<Out<Real>> sigma2, std::optional<Out<Real>> energy) {
  const auto [t, d] = points_shape<Real>(x);
  if (xbar) expect_shape("xbar", *xbar, {t, d});
  if (sigma2) expect_shape("sigma2", *sigma2, {t});
  if (energy) expect_shape("energy", *energy, {t});
  qgml_model* mh = m.get();
  void* xb = xbar ? xbar->data() : nullptr;
  void* s2 = sigma2 ? sigma2->data() : nullptr;
  void* e0 = energy ? energy->data() : nullptr;
  double loss = 0;
  check(call_released([&] { return qgml_evaluate(mh, x.data(), t, d, dtype_of<Real>(), w, xb, s2, e0, &loss); }));
  return loss;
}

template <class Real>
void quantum_metric(const Model& m, const Points<Real>& x, std::optional<Out<Real>> metric,
                    std::optional<Out<Real>> eigenvalues) {
  const auto [t, d] = points_shape<Real>(x);
  if (metric) expect_shape("metric", *metric, {t, d, d});
  if (eigenvalues) expect_shape("eigenvalues", *eigenvalues, {t, d});
  qgml_model* mh = m.get();
  void* g = metric ? metric->data() : nullptr;
  void* ev = eigenvalues ? eigenvalues->data() : nullptr;
  check(call_released([&] { return qgml_quantum_metric(mh, x.data(), t, d, dtype_of<Real>(), g, ev); }));
}

template <class Real>
nb::tuple dimension(const Model& m, const Settings* s, const Points<Real>& x, std::optional<Out<int32_t>> per_point) {
  const auto [t, d] = points_shape<Real>(x);
  if (per_point) expect_shape("per_point", *per_point, {t});
  qgml_model* mh = m.get();
  const qgml_settings* sh = s ? s->get() : nullptr;
  int* pp = per_point ? per_point->data() : nullptr;
  int dim = 0, uncertain = 0;
  check(call_released([&] { return qgml_dimension(mh, sh, x.data(), t, d, dtype_of<Real>(), &dim, pp, &uncertain); }));
  return nb::make_tuple(dim, uncertain != 0);
}

// Supervised predictions into prediction (T, or T x C for several regression outputs), probability
// (classification: T for two classes with the logistic loss, T x K for softmax) and output (T, or T x C);
// returns the number of points without a prediction (NaN).
template <class Real>
int64_t predict(const Model& m, const std::string& supervised_json, const Points<Real>& x, Out<double> prediction,
                std::optional<Out<double>> probability, std::optional<Out<double>> output) {
  const auto [t, d] = points_shape<Real>(x);
  int features = 0, outputs = 0, classes = 0;
  check(qgml_supervised_shape(supervised_json.c_str(), &features, &outputs, &classes));
  const auto rows = [&](int64_t columns) {
    return columns == 1 ? std::vector<int64_t>{t} : std::vector<int64_t>{t, columns};
  };
  const auto expect = [&](const char* name, const Out<double>& a, const std::vector<int64_t>& shape) {
    if (shape.size() == 1)
      expect_shape(name, a, {shape[0]});
    else
      expect_shape(name, a, {shape[0], shape[1]});
  };
  expect("prediction", prediction, rows(classes > 0 ? 1 : outputs));
  if (probability) expect("probability", *probability, rows(classes > 0 && outputs > 1 ? classes : 1));
  if (output) expect("output", *output, rows(outputs));
  qgml_model* mh = m.get();
  double* pr = prediction.data();
  double* pp = probability ? probability->data() : nullptr;
  double* po = output ? output->data() : nullptr;
  int64_t failed = 0;
  check(call_released([&] {
    return qgml_predict(mh, supervised_json.c_str(), x.data(), t, d, dtype_of<Real>(), pr, pp, po, &failed);
  }));
  return failed;
}

// `qgml sample RUN_DIR --key value ...` in process; returns the sample directory.
std::string sample(const std::string& run_dir, const std::vector<std::string>& keys,
                   const std::vector<std::string>& values, bool quiet) {
  if (keys.size() != values.size()) bad_shape("sample: keys and values must have the same length");
  std::vector<const char*> k, v;
  for (const std::string& key : keys) k.push_back(key.c_str());
  for (const std::string& value : values) v.push_back(value.c_str());
  std::string out(run_dir.size() + 4096, '\0');
  for (const std::string& value : values) out.resize(std::max(out.size(), value.size() + 1), '\0');
  size_t needed = 0;
  check(call_released([&] {
    return qgml_sample(run_dir.c_str(), k.data(), v.data(), static_cast<int>(k.size()), quiet ? 1 : 0, out.data(),
                       out.size(), &needed);
  }));
  out.resize(needed > 0 ? needed - 1 : 0);
  return out;
}

}  // namespace

void bind_analysis(nb::module_& mod) {
  mod.def("evaluate", &evaluate<double>, "model"_a, "points"_a.noconvert(), "w"_a, "xbar"_a.noconvert().none(),
          "sigma2"_a.noconvert().none(), "energy"_a.noconvert().none());
  mod.def("evaluate", &evaluate<float>, "model"_a, "points"_a.noconvert(), "w"_a, "xbar"_a.noconvert().none(),
          "sigma2"_a.noconvert().none(), "energy"_a.noconvert().none(),
          "Per point xbar (T, D), sigma^2 (T), E_0 (T) into the given arrays; returns the loss.");
  mod.def("quantum_metric", &quantum_metric<double>, "model"_a, "points"_a.noconvert(), "metric"_a.noconvert().none(),
          "eigenvalues"_a.noconvert().none());
  mod.def("quantum_metric", &quantum_metric<float>, "model"_a, "points"_a.noconvert(), "metric"_a.noconvert().none(),
          "eigenvalues"_a.noconvert().none(), "The quantum metric (T, D, D) and its eigenvalues (T, D).");
  mod.def("dimension", &dimension<double>, "model"_a, "settings"_a.none(), "points"_a.noconvert(),
          "per_point"_a.noconvert().none());
  mod.def("dimension", &dimension<float>, "model"_a, "settings"_a.none(), "points"_a.noconvert(),
          "per_point"_a.noconvert().none(), "(dimension, uncertain); per-point estimates into per_point.");
  mod.def("predict", &predict<double>, "model"_a, "supervised_json"_a, "points"_a.noconvert(),
          "prediction"_a.noconvert(), "probability"_a.noconvert().none(), "output"_a.noconvert().none());
  mod.def("sample", &sample, "run_dir"_a, "keys"_a, "values"_a, "quiet"_a,
          "`qgml sample RUN_DIR --KEY VALUE ...` in process; returns the sample directory.");
  mod.def(
      "sample_resume",
      [](const std::string& dir, int64_t steps, bool quiet) {
        check(call_released([&] { return qgml_sample_resume(dir.c_str(), steps, quiet ? 1 : 0); }));
      },
      "sample_dir"_a, "steps"_a, "quiet"_a, "`qgml sample --resume DIR [--steps S]` in process.");
  mod.def("predict", &predict<float>, "model"_a, "supervised_json"_a, "points"_a.noconvert(),
          "prediction"_a.noconvert(), "probability"_a.noconvert().none(), "output"_a.noconvert().none());
  mod.def("predict", &predict<double>, "model"_a, "supervised_json"_a, "points"_a, "prediction"_a.noconvert(),
          "probability"_a.noconvert().none(), "output"_a.noconvert().none(),
          "Supervised predictions (T, or T x C outputs), class probabilities (T for two classes, T x K for "
          "softmax) and the outputs <psi_0|B_c|psi_0> (T, or T x C) into the given arrays; returns the number of "
          "points without a prediction.");
}

}  // namespace qgml_python
