// In-process profiling of the qgml program through Kokkos Tools callbacks (no external library):
//  - a Chrome trace (opens in Perfetto and chrome://tracing) of qgml's named regions and, optionally,
//    every kernel, recorded only in the scheduled epochs (wait, warmup, active, repeat), in a bounded
//    buffer that counts what it dropped;
//  - a performance monitor: seconds per region per epoch and the high-water mark of allocated bytes.
// When an external Kokkos tool is loaded (KOKKOS_TOOLS_LIBS / KOKKOS_PROFILE_LIBRARY), the callbacks
// are left to it and this profiler stays off.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace qgml::app {

struct ProfilerOptions {
  bool trace = false;
  bool kernels = false;
  bool record_memory = true;
  long max_events = 200000;
  int wait = 0, warmup = 1, active = 3, repeat = 1;
};

class Profiler {
 public:
  // Installs the callbacks; returns false (and does nothing) when an external tool is loaded.
  static bool install(const ProfilerOptions& options);
  static void uninstall();
  static bool installed();

  // Epoch boundaries (0-based epoch), which drive the trace schedule and the per-epoch region times.
  static void begin_epoch(int epoch);
  static std::map<std::string, double> end_epoch();  // seconds per region in the epoch just ended

  static std::uint64_t peak_bytes();
  static long recorded_events();
  static long dropped_events();
  // Writes the trace atomically; returns the number of events written.
  static long write_trace(const std::string& path);
};

}  // namespace qgml::app
