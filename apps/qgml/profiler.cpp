#include "profiler.hpp"

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "json_file.hpp"

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
  std::unordered_map<const void*, std::uint64_t> sizes;
  std::uint64_t current = 0, peak = 0;
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

void allocate(Kokkos::Profiling::SpaceHandle, const char*, const void* ptr, std::uint64_t size) {
  State& s = state();
  s.sizes[ptr] = size;
  s.current += size;
  if (s.current > s.peak) s.peak = s.current;
}

void deallocate(Kokkos::Profiling::SpaceHandle, const char*, const void* ptr, std::uint64_t size) {
  State& s = state();
  s.sizes.erase(ptr);
  s.current = s.current >= size ? s.current - size : 0;
}

}  // namespace

bool Profiler::install(const ProfilerOptions& options) {
  if (std::getenv("KOKKOS_TOOLS_LIBS") || std::getenv("KOKKOS_PROFILE_LIBRARY")) return false;
  namespace T = Kokkos::Tools::Experimental;
  State& s = state();
  s.options = options;
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
