#include "qgml/common/memory_budget.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

namespace qgml {

namespace {

// A number from the first line of a file starting with `prefix` (the whole file when prefix is empty).
bool read_number(const std::string& path, const std::string& prefix, double& value) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::istringstream s(line.substr(prefix.size()));
    return bool(s >> value);
  }
  return false;
}

}  // namespace

MemoryBudget host_memory_budget() {
  MemoryBudget b;
  double kib = 0;
  if (read_number("/proc/meminfo", "MemAvailable:", kib)) {
    b.available = kib * 1024;
    b.source = "MemAvailable";
  } else {
    const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) {
      b.available = double(pages) * double(page);
      b.source = "free memory";
    }
  }
  double limit = 0, used = 0;
  if ((read_number("/sys/fs/cgroup/memory.max", "", limit) && read_number("/sys/fs/cgroup/memory.current", "", used)) ||
      (read_number("/sys/fs/cgroup/memory/memory.limit_in_bytes", "", limit) &&
       read_number("/sys/fs/cgroup/memory/memory.usage_in_bytes", "", used))) {
    if (limit < 1e18 && (b.available < 0 || limit - used < b.available)) {
      b.available = std::max(0.0, limit - used);
      b.source = "the cgroup memory limit's remainder";
    }
  }
  // The address-space limit (ulimit -v) less the address space the process already maps.
  struct rlimit as {};
  double mapped_kib = 0;
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
      read_number("/proc/self/status", "VmSize:", mapped_kib)) {
    const double rest = std::max(0.0, double(as.rlim_cur) - mapped_kib * 1024);
    if (b.available < 0 || rest < b.available) {
      b.available = rest;
      b.source = "the address-space limit RLIMIT_AS (ulimit -v) less the mapped memory";
    }
  }
  if (b.available >= 0) b.bytes = memory_budget_share * b.available;
  return b;
}

}  // namespace qgml
