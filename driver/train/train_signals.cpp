// The signal handler of qgml train and the scope that installs it (train_signals.hpp).
#include "train/train_signals.hpp"

#include <csignal>
#include <unistd.h>

namespace qgml::app {

std::atomic<bool> stop_requested{false};

namespace {

// The first SIGINT or SIGTERM sets stop_requested: training stops after the current batch, keeping the
// last complete epoch (checkpointed). A second one exits at once with 130: the checkpoint LATEST names
// is complete at every instant (checkpoint.hpp), so it stays in force.
extern "C" void on_signal(int) {
  if (stop_requested.exchange(true)) {
    static const char message[] =
        "\nqgml: second interrupt: exiting at once; the last complete checkpoint stays LATEST\n";
    const ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
    (void)ignored;
    ::_exit(130);
  }
}

}  // namespace

StopOnSignal::StopOnSignal() {
  stop_requested.store(false);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

StopOnSignal::~StopOnSignal() {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

}  // namespace qgml::app
