// The run directory of qgml train: a new one with the resolved config.yaml, or the one resumed.
#pragma once

#include <string>

#include "qgml/parallel/communicator.hpp"

#include "settings/run_settings.hpp"

namespace qgml::app {

// A collective: the run directory (a new one under output.directory with the resolved config.yaml,
// or resume_dir), the same on every rank.
// config.yaml records `resolved`, the configuration with the run's choices (resolved_config).
std::string open_run_directory(const Config& resolved, const RunSettings& s, const std::string& config_path,
                               const std::string& resume_dir, Communicator& comm);

}  // namespace qgml::app
