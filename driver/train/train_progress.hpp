// The progress line of a training epoch and the text of its supervised metrics.
#pragma once

#include <string>

#include "qgml/train/supervised_metrics.hpp"
#include "qgml/train/training_settings.hpp"

#include "data/supervised_transform.hpp"

namespace qgml::app {

// The metrics of a supervised epoch for the progress line: RMSE and R^2, or accuracy and AUC.
std::string metrics_text(const SupervisedMetrics& m);

// The metrics per output (R^2) or per class (recall) of several target operators, "" for one.
std::string per_output_text(const SupervisedMetrics& m, const SupervisedTransform& tr);

// The line of epoch r.epoch of `epochs`, its ETA from the `elapsed` seconds so far.
std::string progress_line(const EpochRecord& r, int epochs, double elapsed);

}  // namespace qgml::app
