// Run directories: runs/<name>_<YYYYmmdd-HHMMSS>_<id>/ holding everything one run writes.
#pragma once

#include <string>

namespace qgml::app {

// Creates a new run directory under `parent` and returns its path; throws qgml::Error naming the
// directory when it cannot be created or written.
std::string create_run_directory(const std::string& parent, const std::string& name);

// Throws qgml::Error unless `dir` exists and a file can be created in it.
void check_writable_directory(const std::string& dir);

}  // namespace qgml::app
