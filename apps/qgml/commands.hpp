// The qgml program's subcommands; each returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace qgml::app {

int train_command(const std::vector<std::string>& args);
int tune_command(const std::vector<std::string>& args);
int estimate_command(const std::vector<std::string>& args);
int eval_command(const std::vector<std::string>& args);
int info_command();
int generate_command(const std::vector<std::string>& args);
int fuzzy_sphere_command(const std::vector<std::string>& args);
// out_dir (may be null) gets the sample directory once it is chosen (before the first draw).
int sample_command(const std::vector<std::string>& args, std::string* out_dir = nullptr);
int predict_command(const std::vector<std::string>& args);

}  // namespace qgml::app
