// External programs (the plot script) are started with an argument vector, never through a shell:
// a run directory or data file name is then one argument whatever characters it holds.
#pragma once

#include <string>
#include <vector>

namespace qgml::app {

// Runs argv[0] (looked up in PATH when it has no '/') with the arguments argv[1..] and waits for it.
// With `silent`, its stdout and stderr go to /dev/null. Returns its exit status, or -1 when it could
// not be started or did not exit normally.
int run_program(const std::vector<std::string>& argv, bool silent);

}  // namespace qgml::app
