// qgml's profiler in a training run: a scope that installs it with the profiling.* settings
// (RunSettings::profiling).
#pragma once

#include "run/profiler.hpp"

namespace qgml::app {

// Installs the profiler for a scope (also on the error paths).
struct ProfilerGuard {
  bool active;
  explicit ProfilerGuard(const ProfilerOptions& o) : active(Profiler::install(o)) {}
  ~ProfilerGuard() {
    if (active) Profiler::uninstall();
  }
  ProfilerGuard(const ProfilerGuard&) = delete;
  ProfilerGuard& operator=(const ProfilerGuard&) = delete;
};

}  // namespace qgml::app
