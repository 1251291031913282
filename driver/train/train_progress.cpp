// The progress line of a training epoch (train_progress.hpp).
#include "train/train_progress.hpp"

#include <cmath>
#include <cstddef>

#include "common/format.hpp"

namespace qgml::app {

std::string metrics_text(const SupervisedMetrics& m) {
  if (!std::isnan(m.accuracy)) return format("accuracy %.4f, AUC %.4f", m.accuracy, m.auc);
  return format("RMSE %.5g, R^2 %.4f", m.rmse, m.r2);
}

std::string per_output_text(const SupervisedMetrics& m, const SupervisedTransform& tr) {
  if (m.per_output.empty()) return "";
  std::string out = tr.task == Task::classification ? "recall per class" : "R^2 per output";
  for (std::size_t c = 0; c < m.per_output.size(); ++c) {
    const std::string name =
        tr.task == Task::classification && c < tr.classes.size() ? format("%.17g", tr.classes[c]) : std::to_string(c);
    out += format("%s %s %.4f", c ? "," : "", name.c_str(), m.per_output[c]);
  }
  return out;
}

std::string progress_line(const EpochRecord& r, int epochs, double elapsed) {
  const double eta = r.epoch > 0 ? elapsed / r.epoch * (epochs - r.epoch) : 0;
  if (r.has_targets)
    return format("epoch %d/%d  loss %.8g  train %s%s  %.0f points/s  ETA %.0f s%s", r.epoch, epochs, r.total,
                  metrics_text(r.train).c_str(),
                  std::isnan(r.validation.mae) && std::isnan(r.validation.accuracy)
                      ? ""
                      : ("  validation " + metrics_text(r.validation)).c_str(),
                  r.points_per_second, eta,
                  r.skipped_batches ? format("  [%d batches skipped]", r.skipped_batches).c_str() : "");
  return format("epoch %d/%d  loss %.10g  (d^2 %.10g, sigma^2 %.10g)  %.0f points/s  ETA %.0f s%s", r.epoch, epochs,
                r.total, r.reconstruction, r.fluctuation, r.points_per_second, eta,
                r.skipped_batches ? format("  [%d batches skipped]", r.skipped_batches).c_str() : "") +
         (r.eigh_sweeps > 0 ? format("  (%.2f Jacobi sweeps per point)", r.eigh_sweeps) : std::string());
}

}  // namespace qgml::app
