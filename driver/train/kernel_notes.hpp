// The log's lines on the kernels a training run uses (plan/kernel_plan.hpp).
#pragma once

#include <string>
#include <vector>

#include "settings/run_settings.hpp"

namespace qgml::app {

// The `automatic:` lines of the kernels that run at N (plan/kernel_plan.hpp); `analysis`: the run computes
// the metric.
std::vector<std::string> kernel_notes(const RunSettings& s, int n, bool analysis);

}  // namespace qgml::app
