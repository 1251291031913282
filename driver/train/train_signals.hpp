// SIGINT and SIGTERM during qgml train: the first stops training after the current batch, a second
// exits at once.
#pragma once

#include <atomic>

namespace qgml::app {

// Set by the first SIGINT or SIGTERM while a StopOnSignal is in scope.
extern std::atomic<bool> stop_requested;

// SIGINT and SIGTERM go to on_signal (train_signals.cpp) for a scope.
struct StopOnSignal {
  StopOnSignal();
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
};

}  // namespace qgml::app
