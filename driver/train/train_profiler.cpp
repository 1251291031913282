// The profiler's options of a training run (train_profiler.hpp).
#include "train/train_profiler.hpp"

namespace qgml::app {

ProfilerOptions profiler_options(const Config& c) {
  ProfilerOptions popts;
  popts.trace = c.boolean("profiling.enabled");
  popts.kernels = c.boolean("profiling.kernels");
  popts.record_memory = c.boolean("profiling.record_memory");
  popts.max_events = c.integer("profiling.max_events");
  popts.wait = int(c.integer("profiling.wait"));
  popts.warmup = int(c.integer("profiling.warmup"));
  popts.active = int(c.integer("profiling.active"));
  popts.repeat = int(c.integer("profiling.repeat"));
  return popts;
}

}  // namespace qgml::app
