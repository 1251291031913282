// The log's lines on the kernels a training run uses (kernel_notes.hpp).
#include "train/kernel_notes.hpp"

#include "qgml/plan/kernel_plan.hpp"
#include "qgml/train/training_settings.hpp"

#include "settings/run_setup.hpp"
#include "train/train_spaces.hpp"

namespace qgml::app {

std::vector<std::string> kernel_notes(const RunSettings& s, int n, bool analysis) {
  const TrainingSettings ts = training_settings(s, "");
  KernelRequest r;
  r.loss = ts.kernel;
  r.warm_start = ts.warm_start_eigh;
  r.ground_state_path = ts.ground_state_path;
  r.mixed_precision = ts.mixed_precision_reduction;
  r.wide_packs = ts.wide_packs;
  r.geometry = s.analysis.geometry.kernel;
  r.analysis = analysis;
  const Precision precision = s.model.single_precision ? Precision::single_precision : Precision::double_precision;
  return plan_kernels(backend_of<Exec>, precision, n, r).describe();
}

}  // namespace qgml::app
