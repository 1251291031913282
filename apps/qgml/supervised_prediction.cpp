#include "supervised_prediction.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>

#include "qgml/common/error.hpp"
#include "qgml/train/supervised_loss.hpp"
#include "qgml/train/target_predictor.hpp"

#include "format.hpp"

namespace qgml::app {

SupervisedPrediction predict_supervised(const SupervisedTransform& tr, const HostMatrices& operators,
                                        const HostData& features, const std::string& source) {
  const int d = int(tr.feature_mean.size());
  if (operators.D != d + 1)
    throw Error(
        format("'%s' holds %d matrices; the model has D = %d features (expected D + 1 = %d: the feature "
               "matrices, then the target operator B)",
               source.c_str(), operators.D, d, d + 1));
  if (features.cols != d)
    throw Error(format("the points have %d features; the model learned D = %d", features.cols, d));
  SupervisedPrediction out;
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
  const Matrix<double, Memory> b = Kokkos::subview(all.matrices(), d, Kokkos::ALL, Kokkos::ALL);
  const auto points = to_device_points<double>(exec, model);
  RealVector<double, Memory> y_hat("qgml::predict::y_hat", model.rows);
  TargetPredictor<double, Exec> predictor(operators.N, std::min(model.rows, 25000));
  predictor.predict(exec, feature_config, b, points, y_hat);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_hat);

  const bool classification = tr.task == Task::classification;
  out.model_output.resize(std::size_t(model.rows));
  out.value.resize(std::size_t(model.rows));
  if (classification) out.probability.resize(std::size_t(model.rows));
  for (int t = 0; t < model.rows; ++t) {
    const double v = h(t);
    out.model_output[t] = v;
    if (!std::isfinite(v)) {
      ++out.failed;
      out.value[t] = v;
      if (classification) out.probability[t] = v;
    } else if (classification) {
      out.probability[t] = sigmoid(v);
      out.value[t] = v > 0 ? tr.positive : tr.negative;
    } else {
      out.value[t] = tr.target_mean + tr.target_scale * v;
    }
  }
  return out;
}

}  // namespace qgml::app
