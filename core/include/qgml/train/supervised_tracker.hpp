// Supervised training's state in a Trainer beside the parameter stack of the D feature matrices and the
// C target operators (docs/supervised.md): the predictions of every epoch, the validation points and
// their metrics, the targets' units, and the best epoch by validation loss (training.validation_patience).
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/model/matrix_configuration.hpp"
#include "qgml/parallel/communicator.hpp"
#include "qgml/train/supervised_loss.hpp"
#include "qgml/train/supervised_metrics.hpp"
#include "qgml/train/target_predictor.hpp"
#include "qgml/train/training_settings.hpp"

namespace qgml {

// D of the points of a configuration of `dimension` operators: those less the C target operators of
// supervised training.
inline int training_feature_count(int dimension, const TrainingSettings& s) {
  if (!is_supervised(s.task)) return dimension;
  const int outputs = s.supervised.outputs;
  QGML_REQUIRE(outputs >= 1 && (outputs == 1 || s.supervised.loss != SupervisedLoss::logistic),
               "qgml::Trainer: supervised.outputs = " + std::to_string(outputs) +
                   " (expected >= 1, and 1 for the logistic loss: softmax takes several classes)");
  QGML_REQUIRE(dimension >= outputs + 1,
               "qgml::Trainer: supervised training needs the D >= 1 feature matrices and the " +
                   std::to_string(outputs) + " target operator(s) in the configuration, got " +
                   std::to_string(dimension) + " matrices");
  return dimension - outputs;
}
// Columns of a training point: D, and supervised the target columns after them.
inline int training_point_columns(int dimension, const TrainingSettings& s) {
  const int d = training_feature_count(dimension, s);
  return is_supervised(s.task) ? d + target_columns(s.supervised.loss, s.supervised.outputs) : d;
}

namespace detail {

// Row first + t of out = (y_hat(t, 0..C-1), y(t, 0..columns-1)).
template <class Out, class Predictions, class Targets>
struct RecordPredictions {
  Out out;
  Predictions y_hat;
  Targets y;
  int first = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const int t) const {
    const int outputs = int(y_hat.extent(1)), columns = int(y.extent(1));
    for (int c = 0; c < outputs; ++c) out(first + t, c) = y_hat(t, c);
    for (int j = 0; j < columns; ++j) out(first + t, outputs + j) = y(t, j);
  }
};

// Rows [first, first + count) of out <- (y_hat(t, :), y(t, :)): a batch's predictions and targets.
template <class ExecSpace, class Out, class Predictions, class Targets>
void record_predictions(const ExecSpace& exec, const Out& out, const Predictions& y_hat, const Targets& y, int first,
                        int count) {
  Kokkos::parallel_for("qgml::Trainer::record_predictions", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                       RecordPredictions<Out, Predictions, Targets>{out, y_hat, y, first});
}

// out(t, outputs + j) = points(t, d + j) for the target columns j.
template <class Out, class Points>
struct CopyTargets {
  Out out;
  Points points;
  int d = 0, outputs = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const int t) const {
    for (int j = 0; d + j < int(points.extent(1)); ++j) out(t, outputs + j) = points(t, d + j);
  }
};

// out(t, outputs + j) <- points(t, d + j), the targets of the points after their C outputs.
template <class ExecSpace, class Out, class Points>
void copy_targets(const ExecSpace& exec, const Out& out, const Points& points, int d, int outputs) {
  Kokkos::parallel_for("qgml::Trainer::validation_targets",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, int(points.extent(0))),
                       CopyTargets<Out, Points>{out, points, d, outputs});
}

}  // namespace detail

// Supervised training's state beside the parameter stack (docs/supervised.md): the features'
// configuration (a view of the first D operators) and the target operators B_c (the last C); this epoch's
// (y_hat, y) per point of this rank in batch order; the validation points and their predictor; the
// targets' units of the metrics; and the epoch with the lowest mean validation loss, with its operators.
template <class Real, class ExecSpace>
class SupervisedTracker {
 public:
  using memory_space = typename ExecSpace::memory_space;
  using points_type = Kokkos::View<Real**, Kokkos::LayoutRight, memory_space>;

  SupervisedTracker() = default;
  // For `config`'s D + C operators (D = features_d) and `rows` points of this rank; allocates this
  // epoch's predictions.
  SupervisedTracker(MatrixConfiguration<Real, ExecSpace>& config, const TrainingSettings& settings, int features_d,
                    std::int64_t rows, const ExecSpace& exec)
      : settings_(settings), features_d_(features_d) {
    check_task_loss(settings.task, settings.supervised.loss);
    features_ = MatrixConfiguration<Real, ExecSpace>(
        Kokkos::subview(config.matrices(), Kokkos::make_pair(0, features_d_), Kokkos::ALL, Kokkos::ALL), exec);
    target_operator_ = Kokkos::subview(config.matrices(), Kokkos::make_pair(features_d_, config.dimension()),
                                       Kokkos::ALL, Kokkos::ALL);
    predictions_ = predictions_type(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::predictions"),
                                    std::max<std::int64_t>(1, rows), prediction_row(settings));
    predictions_host_ = Kokkos::create_mirror(predictions_);
    target_mean_.assign(std::size_t(settings.supervised.outputs), 0.0);
    target_scale_.assign(std::size_t(settings.supervised.outputs), 1.0);
  }

  // Values per row of the predictions: the C outputs, then the target columns.
  static int prediction_row(const TrainingSettings& s) {
    return s.supervised.outputs + target_columns(s.supervised.loss, s.supervised.outputs);
  }

  MatrixConfiguration<Real, ExecSpace>& features() { return features_; }
  const MatrixStack<Real, memory_space>& target_operators() const { return target_operator_; }

  // Validation points (T_v x (D + target columns)), predicted with at most max_batch points at a time by
  // config's operators; an empty View removes them.
  void set_validation(const points_type& points, const MatrixConfiguration<Real, ExecSpace>& config, int max_batch) {
    validation_ = points;
    if (points.extent(0) == 0) return;
    const int count = int(points.extent(0));
    predictor_ = TargetPredictor<Real, ExecSpace>(config.matrix_size(), std::min(count, max_batch));
    validation_predictions_ =
        predictions_type(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::validation_predictions"), count,
                         prediction_row(settings_));
    validation_predictions_host_ = Kokkos::create_mirror(validation_predictions_);
    allocate_best(config);
  }
  bool has_validation() const { return validation_.extent(0) > 0; }

  void set_target_units(const std::vector<double>& mean, const std::vector<double>& scale) {
    QGML_REQUIRE(int(mean.size()) == settings_.supervised.outputs && mean.size() == scale.size(),
                 "qgml::Trainer::set_target_units: one mean and one scale per output");
    target_mean_ = mean;
    target_scale_ = scale;
  }

  // The start of an epoch: no predictions recorded.
  void begin_epoch() { predicted_ = 0; }
  // Rows [predicted, predicted + count) of this epoch's predictions <- (y_hat, y) of the batch just computed.
  template <class Predictions, class TargetView>
  void record(const ExecSpace& exec, const Predictions& y_hat, const TargetView& y, int count) {
    detail::record_predictions(exec, predictions_, y_hat, y, predicted_, count);
    predicted_ += count;
  }

  // r.train from this epoch's predictions (on several ranks, `comm`, gathered to rank 0, which computes
  // them and tells the others) and r.validation from the validation points with the operators as they
  // are now.
  void epoch_metrics(EpochRecord& r, const ExecSpace& exec, Communicator* comm) {
    r.has_targets = true;
    const int outputs = settings_.supervised.outputs, row = prediction_row(settings_);
    Kokkos::deep_copy(exec, predictions_host_, predictions_);
    if (validation_.extent(0) > 0) {
      features_.update_square_sum(exec);
      const auto x = Kokkos::subview(validation_, Kokkos::ALL, Kokkos::make_pair(0, features_d_));
      const auto y_hat = Kokkos::subview(validation_predictions_, Kokkos::ALL, Kokkos::make_pair(0, outputs));
      predictor_.predict(exec, features_, target_operator_, x, y_hat);
      detail::copy_targets(exec, validation_predictions_, validation_, features_d_, outputs);
      Kokkos::deep_copy(exec, validation_predictions_host_, validation_predictions_);
    }
    qgml::fence(exec, "qgml::Trainer: predictions on the host");
    if (validation_.extent(0) > 0) {
      const std::size_t count = validation_.extent(0);
      r.validation = metrics_of(validation_predictions_host_, count);
      std::vector<double> rows(std::size_t(row) * count);
      for (std::size_t i = 0; i < count; ++i)
        for (int c = 0; c < row; ++c) rows[std::size_t(row) * i + c] = double(validation_predictions_host_(i, c));
      validation_loss_ =
          mean_point_loss(settings_.supervised.loss, outputs, settings_.supervised.huber_delta, rows.data(), count);
    }
    const std::size_t local = std::size_t(predicted_);
    if (!comm) {
      r.train = metrics_of(predictions_host_, local);
      return;
    }
    std::vector<double> mine(std::size_t(row) * local);
    for (std::size_t i = 0; i < local; ++i)
      for (int c = 0; c < row; ++c) mine[std::size_t(row) * i + c] = double(predictions_host_(i, c));
    const std::vector<double> all = comm->gather_to_root(mine);
    std::string text;
    if (comm->rank() == 0) {
      const std::size_t count = all.size() / std::size_t(row);
      Kokkos::View<const double**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> gathered(
          all.data(), count, std::size_t(row));
      const SupervisedMetrics m = metrics_of(gathered, count);
      std::ostringstream out;
      out.precision(17);
      for (double v : {m.mae, m.rmse, m.r2, m.accuracy, m.auc}) out << v << " ";
      out << m.per_output.size() << " ";
      for (double v : m.per_output) out << v << " ";
      text = out.str();
    }
    std::istringstream in(comm->broadcast(text, 0));
    const auto next = [&in] {
      std::string word;
      in >> word;
      return std::strtod(word.c_str(), nullptr);
    };
    for (double* v : {&r.train.mae, &r.train.rmse, &r.train.r2, &r.train.accuracy, &r.train.auc}) *v = next();
    r.train.per_output.resize(std::size_t(next()));
    for (double& v : r.train.per_output) v = next();
  }

  // The epoch with the lowest mean validation loss so far (0: none) and that loss.
  int best_epoch() const { return best_epoch_; }
  double best_validation_loss() const { return best_validation_; }
  // After epoch `epoch` with validation points: a lower (finite) mean validation loss makes it the best,
  // and config's operators are kept.
  void track_best(int epoch, const MatrixConfiguration<Real, ExecSpace>& config, const ExecSpace& exec) {
    if (!std::isfinite(validation_loss_) || (best_epoch_ > 0 && !(validation_loss_ < best_validation_))) return;
    best_epoch_ = epoch;
    best_validation_ = validation_loss_;
    Kokkos::deep_copy(exec, best_matrices_, config.matrices());
  }
  // `patience` epochs after the best one without a lower validation loss (patience 0: never).
  bool patience_exhausted(int epoch, int patience) const {
    return patience > 0 && best_epoch_ > 0 && epoch - best_epoch_ >= patience;
  }
  // config <- the best epoch's operators; returns best_epoch() (0: nothing restored).
  int restore_best(MatrixConfiguration<Real, ExecSpace>& config, const ExecSpace& exec) {
    if (best_epoch_ == 0) return 0;
    Kokkos::deep_copy(exec, config.matrices(), best_matrices_);
    config.update_square_sum(exec);
    qgml::fence(exec, "qgml::Trainer: the best epoch's operators restored");
    return best_epoch_;
  }
  // The best epoch's operators on the host (checkpoints).
  HostMatrices best_host(const ExecSpace& exec) const { return stack_to_host(best_matrices_, exec); }
  // The best epoch, its loss and (best_epoch > 0) its operators, from a checkpoint.
  void restore_best_state(int best_epoch, double best_validation, const HostMatrices& h,
                          const MatrixConfiguration<Real, ExecSpace>& config, const ExecSpace& exec) {
    best_epoch_ = best_epoch;
    best_validation_ = best_validation;
    if (best_epoch_ == 0) return;
    allocate_best(config);
    host_to_stack(h, best_matrices_, exec);
  }

 private:
  using predictions_type = Kokkos::View<Real**, Kokkos::LayoutRight, memory_space>;

  // The metrics of prediction rows (the C outputs, then the targets) in host memory, in the caller's
  // target units.
  template <class HostRows>
  SupervisedMetrics metrics_of(const HostRows& rows, std::size_t count) const {
    const int outputs = settings_.supervised.outputs, row = prediction_row(settings_);
    const bool regression = settings_.task == Task::regression;
    std::vector<double> values(std::size_t(row) * count);
    for (std::size_t i = 0; i < count; ++i)
      for (int c = 0; c < row; ++c) {
        const int o = c < outputs ? c : c - outputs;  // the output of a prediction or of a target column
        const double v = double(rows(i, c));
        values[std::size_t(row) * i + c] =
            regression ? target_mean_[std::size_t(o)] + target_scale_[std::size_t(o)] * v : v;
      }
    return supervised_metrics(settings_.task, settings_.supervised.loss, outputs, values.data(), count);
  }
  void allocate_best(const MatrixConfiguration<Real, ExecSpace>& config) {
    if (best_matrices_.extent(0) > 0) return;
    best_matrices_ = MatrixStack<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::best"),
                                                     config.dimension(), config.matrix_size(), config.matrix_size());
  }

  TrainingSettings settings_;
  int features_d_ = 0;
  MatrixConfiguration<Real, ExecSpace> features_;
  MatrixStack<Real, memory_space> target_operator_;
  predictions_type predictions_, validation_predictions_;  // rows: the C outputs, then the targets
  typename predictions_type::HostMirror predictions_host_, validation_predictions_host_;
  int predicted_ = 0;
  points_type validation_;
  TargetPredictor<Real, ExecSpace> predictor_;
  std::vector<double> target_mean_, target_scale_;  // per output
  double validation_loss_ = 0, best_validation_ = 0;
  int best_epoch_ = 0;
  MatrixStack<Real, memory_space> best_matrices_;
};

}  // namespace qgml
