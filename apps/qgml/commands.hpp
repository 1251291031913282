// The qgml program's subcommands; each returns the process exit code (sample_command is the driver's:
// the C interface runs it too).
#pragma once

#include <string>
#include <vector>

#include "sample/sample_command.hpp"

namespace qgml::app {

int train_command(const std::vector<std::string>& args);
int tune_command(const std::vector<std::string>& args);
int estimate_command(const std::vector<std::string>& args);
int eval_command(const std::vector<std::string>& args);
int info_command();
int generate_command(const std::vector<std::string>& args);
int fuzzy_sphere_command(const std::vector<std::string>& args);
int predict_command(const std::vector<std::string>& args);

}  // namespace qgml::app
