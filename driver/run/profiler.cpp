#include "run/profiler.hpp"

#include <Kokkos_Core.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "common/json_file.hpp"

namespace qgml::app {

namespace {

struct Event {
  std::string name;
  const char* category;
  double start_us, duration_us;
};

struct State {
  bool installed = false;
  ProfilerOptions options;
  bool recording = false;
  std::chrono::steady_clock::time_point origin = std::chrono::steady_clock::now();
  std::vector<std::pair<std::string, double>> stack;
  std::unordered_map<std::uint64_t, std::pair<std::string, double>> kernels;
  std::uint64_t next_kernel = 1;
  std::vector<Event> events;
  long dropped = 0;
  std::map<std::string, double> epoch_regions;
  // Allocation callbacks also come from worker threads (Kokkos' OpenMP backend resizes its per-thread
  // scratch inside a parallel region), so the byte counts are atomics; every other callback runs on
  // the thread that launches kernels.
  std::atomic<std::uint64_t> current{0}, peak{0};
};

State& state() {
  static State s;
  return s;
}

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - state().origin).count();
}

void record(std::string name, const char* category, double start, double end) {
  State& s = state();
  if (!s.recording) return;
  if (long(s.events.size()) >= s.options.max_events) {
    ++s.dropped;
    return;
  }
  s.events.push_back({std::move(name), category, start, end - start});
}

void push_region(const char* name) { state().stack.emplace_back(name, now_us()); }

void pop_region() {
  State& s = state();
  if (s.stack.empty()) return;
  const double end = now_us();
  auto [name, start] = s.stack.back();
  s.stack.pop_back();
  s.epoch_regions[name] += (end - start) * 1e-6;
  record(std::move(name), "region", start, end);
}

void begin_kernel(const char* name, std::uint32_t, std::uint64_t* id) {
  State& s = state();
  *id = s.next_kernel++;
  if (s.options.kernels && s.recording) s.kernels[*id] = {name, now_us()};
}

void end_kernel(std::uint64_t id) {
  State& s = state();
  auto it = s.kernels.find(id);
  if (it == s.kernels.end()) return;
  record(it->second.first, "kernel", it->second.second, now_us());
  s.kernels.erase(it);
}

void allocate(Kokkos::Profiling::SpaceHandle, const char*, const void*, std::uint64_t size) {
  State& s = state();
  const std::uint64_t now = s.current.fetch_add(size) + size;
  std::uint64_t peak = s.peak.load();
  while (now > peak && !s.peak.compare_exchange_weak(peak, now)) {
  }
}

// Memory allocated before install() and freed while installed is not counted: the count stays >= 0.
void deallocate(Kokkos::Profiling::SpaceHandle, const char*, const void*, std::uint64_t size) {
  State& s = state();
  std::uint64_t current = s.current.load();
  while (!s.current.compare_exchange_weak(current, current >= size ? current - size : 0)) {
  }
}

}  // namespace

bool Profiler::install(const ProfilerOptions& options) {
  if (std::getenv("KOKKOS_TOOLS_LIBS") || std::getenv("KOKKOS_PROFILE_LIBRARY")) return false;
  namespace T = Kokkos::Tools::Experimental;
  State& s = state();
  // A fresh record per install: a process (the Python package, the C interface) trains many times.
  s.options = options;
  s.recording = false;
  s.origin = std::chrono::steady_clock::now();
  s.stack.clear();
  s.kernels.clear();
  s.next_kernel = 1;
  s.events.clear();
  s.dropped = 0;
  s.epoch_regions.clear();
  s.current = 0;
  s.peak = 0;
  s.events.reserve(std::size_t(std::min<long>(options.max_events, 1 << 20)));
  T::set_push_region_callback(push_region);
  T::set_pop_region_callback(pop_region);
  if (options.record_memory) {
    T::set_allocate_data_callback(allocate);
    T::set_deallocate_data_callback(deallocate);
  }
  if (options.kernels) {
    T::set_begin_parallel_for_callback(begin_kernel);
    T::set_end_parallel_for_callback(end_kernel);
    T::set_begin_parallel_reduce_callback(begin_kernel);
    T::set_end_parallel_reduce_callback(end_kernel);
  }
  s.installed = true;
  return true;
}

void Profiler::uninstall() {
  namespace T = Kokkos::Tools::Experimental;
  if (!state().installed) return;
  T::set_push_region_callback(nullptr);
  T::set_pop_region_callback(nullptr);
  T::set_allocate_data_callback(nullptr);
  T::set_deallocate_data_callback(nullptr);
  T::set_begin_parallel_for_callback(nullptr);
  T::set_end_parallel_for_callback(nullptr);
  T::set_begin_parallel_reduce_callback(nullptr);
  T::set_end_parallel_reduce_callback(nullptr);
  state().installed = false;
}

bool Profiler::installed() { return state().installed; }

void Profiler::begin_epoch(int epoch) {
  State& s = state();
  s.epoch_regions.clear();
  const ProfilerOptions& o = s.options;
  const int cycle = o.wait + o.warmup + o.active;
  const int in_cycle = cycle > 0 ? epoch % cycle : 0;
  const bool within_repeats = o.repeat == 0 || epoch < o.repeat * cycle;
  s.recording = s.options.trace && within_repeats && in_cycle >= o.wait + o.warmup;
}

std::map<std::string, double> Profiler::end_epoch() {
  state().recording = false;
  return state().epoch_regions;
}

std::uint64_t Profiler::peak_bytes() { return state().peak; }
long Profiler::recorded_events() { return long(state().events.size()); }
long Profiler::dropped_events() { return state().dropped; }

long Profiler::write_trace(const std::string& path) {
  const State& s = state();
  // Chrome's trace event format: complete ("X") events, times in microseconds.
  Json events = Json::array();
  for (const Event& e : s.events)
    events.push_back({{"name", e.name},
                      {"cat", e.category},
                      {"ph", "X"},
                      {"ts", e.start_us},
                      {"dur", e.duration_us},
                      {"pid", 1},
                      {"tid", 1}});
  write_json_file(
      path,
      {{"displayTimeUnit", "ms"},
       {"otherData", {{"producer", "qgml"}, {"dropped_events", s.dropped}, {"max_events", s.options.max_events}}},
       {"traceEvents", std::move(events)}},
      -1);
  return long(s.events.size());
}

}  // namespace qgml::app
