// qgml's profiler in a training run: its options from the profiling.* settings and a scope that
// installs it.
#pragma once

#include "run/profiler.hpp"
#include "settings/config.hpp"

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

// The profiling.* settings.
ProfilerOptions profiler_options(const Config& c);

}  // namespace qgml::app
