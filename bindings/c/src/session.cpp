// Kokkos for the C interface: started by qgml_initialize only when the process has not started it, and
// ended by qgml_finalize only when qgml_initialize started it.
#include <Kokkos_Core.hpp>

#include <mutex>
#include <string>

#include "c_api_internal.hpp"

namespace {
std::mutex session_mutex;
bool started_here = false;
}  // namespace

extern "C" {

int qgml_initialize(int num_threads, int* started) {
  return qgml::capi::guarded("qgml_initialize", QGML_ERROR_RUNTIME, [&] {
    std::lock_guard<std::mutex> lock(session_mutex);
    if (started) *started = 0;
    qgml::capi::require(num_threads <= QGML_MAX_THREADS, "qgml_initialize",
                        "num_threads = " + std::to_string(num_threads) + ": at most QGML_MAX_THREADS (" +
                            std::to_string(QGML_MAX_THREADS) + ")");
    if (Kokkos::is_initialized()) return;
#if KOKKOS_VERSION >= 30700
    if (Kokkos::is_finalized())
      throw qgml::capi::Failure{QGML_ERROR_RUNTIME,
                                "qgml_initialize: Kokkos was finalised in this process and cannot start again"};
    Kokkos::InitializationSettings settings;
    if (num_threads > 0) settings.set_num_threads(num_threads);
    Kokkos::initialize(settings);
#else
    Kokkos::InitArguments arguments;
    if (num_threads > 0) arguments.num_threads = num_threads;
    Kokkos::initialize(arguments);
#endif
    started_here = true;
    if (started) *started = 1;
  });
}

int qgml_finalize(void) {
  return qgml::capi::guarded("qgml_finalize", QGML_ERROR_RUNTIME, [&] {
    std::lock_guard<std::mutex> lock(session_mutex);
    if (!started_here) return;
    started_here = false;
    if (Kokkos::is_initialized()) Kokkos::finalize();
  });
}

}  // extern "C"
