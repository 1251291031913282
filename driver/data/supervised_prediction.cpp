#include "data/supervised_prediction.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "qgml/common/error.hpp"
#include "qgml/train/supervised_loss.hpp"
#include "qgml/train/target_predictor.hpp"

#include "common/format.hpp"

namespace qgml::app {

SupervisedPrediction predict_supervised(const SupervisedTransform& tr, const HostMatrices& operators,
                                        const HostData& features, const std::string& source) {
  const int d = int(tr.feature_mean.size()), outputs = tr.outputs();
  if (operators.D != d + outputs)
    throw Error(
        format("'%s' holds %d matrices; the model has D = %d features and %d target operator(s) (expected %d: the "
               "feature matrices, then the target operators)",
               source.c_str(), operators.D, d, outputs, d + outputs));
  if (features.cols != d)
    throw Error(format("the points have %d features; the model learned D = %d", features.cols, d));
  SupervisedPrediction out;
  out.outputs = outputs;
  if (features.rows == 0) return out;
  HostData model = features;
  apply_supervised_transform(tr, model, false);

  using Exec = Kokkos::DefaultExecutionSpace;
  using Memory = Exec::memory_space;
  const Exec exec;
  HostMatrices a{d, operators.N, {}};
  a.values.assign(operators.values.begin(), operators.values.begin() + std::size_t(d) * operators.N * operators.N);
  const auto feature_config = to_configuration<double>(a, exec);
  const auto all = to_configuration<double>(operators, exec);
  const MatrixStack<double, Memory> b =
      Kokkos::subview(all.matrices(), Kokkos::make_pair(d, d + outputs), Kokkos::ALL, Kokkos::ALL);
  const auto points = to_device_points<double>(exec, model);
  RealMatrix<double, Memory> y_hat("qgml::predict::y_hat", model.rows, outputs);
  TargetPredictor<double, Exec> predictor(operators.N, std::min(model.rows, 25000));
  predictor.predict(exec, feature_config, b, points, y_hat);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_hat);

  const std::size_t rows = std::size_t(model.rows), c_count = std::size_t(outputs);
  out.model_output.resize(rows * c_count);
  for (std::size_t t = 0; t < rows; ++t)
    for (std::size_t c = 0; c < c_count; ++c) out.model_output[t * c_count + c] = h(t, c);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto point_failed = [&](std::size_t t) {
    for (std::size_t c = 0; c < c_count; ++c)
      if (!std::isfinite(out.model_output[t * c_count + c])) return true;
    return false;
  };
  if (tr.task == Task::regression) {
    out.value.resize(rows * c_count);
    for (std::size_t t = 0; t < rows; ++t) {
      out.failed += point_failed(t) ? 1 : 0;
      for (std::size_t c = 0; c < c_count; ++c)
        out.value[t * c_count + c] = tr.target_mean[c] + tr.target_scale[c] * out.model_output[t * c_count + c];
    }
    return out;
  }
  out.value.resize(rows);
  if (!tr.softmax) {
    out.probability.resize(rows);
    for (std::size_t t = 0; t < rows; ++t) {
      const double v = out.model_output[t];
      if (point_failed(t)) {
        ++out.failed;
        out.value[t] = out.probability[t] = v;
      } else {
        out.probability[t] = sigmoid(v);
        out.value[t] = v > 0 ? tr.classes[1] : tr.classes[0];
      }
    }
    return out;
  }
  out.probability.resize(rows * c_count);
  for (std::size_t t = 0; t < rows; ++t) {
    const double* y = &out.model_output[t * c_count];
    double* p = &out.probability[t * c_count];
    if (point_failed(t)) {
      ++out.failed;
      out.value[t] = nan;
      for (std::size_t c = 0; c < c_count; ++c) p[c] = nan;
      continue;
    }
    std::size_t best = 0;
    for (std::size_t c = 1; c < c_count; ++c)
      if (y[c] > y[best]) best = c;
    double sum = 0;
    for (std::size_t c = 0; c < c_count; ++c) sum += (p[c] = std::exp(y[c] - y[best]));
    for (std::size_t c = 0; c < c_count; ++c) p[c] /= sum;
    out.value[t] = tr.classes[best];
  }
  return out;
}

}  // namespace qgml::app
