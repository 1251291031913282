// The sample run of a trained model from its argument vector (the options of `qgml sample`,
// sample_options.hpp): the program's subcommand and the C interface's qgml_sample run the same code.
#pragma once

#include <string>
#include <vector>

namespace qgml::app {

// Returns the process exit code; out_dir (may be null) gets the sample directory once it is chosen (before
// the first draw).
int sample_command(const std::vector<std::string>& args, std::string* out_dir = nullptr);

}  // namespace qgml::app
