// Shared pieces of the benchmark drivers: command-line lists, timing with medians, and JSON lines that
// carry the settings, the Kokkos configuration and the git revision.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/linalg/team_shape.hpp"
#include "qgml/version.hpp"

#include "qgml_git_revision.hpp"  // generated at build time (cmake/git_revision.cmake)

namespace qgml::bench {

// A team shape from its command-line spelling (--shapes): "auto", "team<T>" (one problem per team of T
// threads; team0: Kokkos::AUTO), "lanes<L>" or "lanes<L>x<P>" (P problems per team on L lanes each; P
// omitted or 0: automatic).
inline TeamShape parse_team_shape(const std::string& text) {
  const auto number = [&](const std::string& digits) {
    QGML_REQUIRE(!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos,
                 "--shapes: expected auto, team<T>, lanes<L> or lanes<L>x<P>, got '" + text + "'");
    return std::stoi(digits);
  };
  if (text == "auto") return TeamShape{};
  if (text.rfind("team", 0) == 0) return TeamShape::with_threads(number(text.substr(4)));
  if (text.rfind("lanes", 0) == 0) {
    const std::string rest = text.substr(5);
    const auto x = rest.find('x');
    if (x == std::string::npos) return TeamShape::with_lanes(number(rest));
    return TeamShape::with_lanes(number(rest.substr(0, x)), number(rest.substr(x + 1)));
  }
  return TeamShape::with_lanes(number(text));  // throws with the message above
}

// --key v1 v2 ... style arguments; every value is kept as text.
class Args {
 public:
  Args(int argc, char** argv) {
    std::string key;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a.rfind("--", 0) == 0 && a.size() > 2 && !std::isdigit(static_cast<unsigned char>(a[2]))) {
        key = a.substr(2);
        values_[key];
      } else if (!key.empty()) {
        values_[key].push_back(a);
      } else {
        std::fprintf(stderr, "unexpected argument '%s'\n", a.c_str());
        std::exit(2);
      }
    }
  }
  bool has(const std::string& k) const { return values_.count(k) != 0; }
  std::vector<std::string> strings(const std::string& k, std::vector<std::string> dflt) const {
    auto it = values_.find(k);
    return it == values_.end() || it->second.empty() ? dflt : it->second;
  }
  std::vector<int> ints(const std::string& k, std::vector<int> dflt) const {
    auto it = values_.find(k);
    if (it == values_.end() || it->second.empty()) return dflt;
    std::vector<int> r;
    for (const auto& s : it->second) r.push_back(std::stoi(s));
    return r;
  }
  int integer(const std::string& k, int dflt) const { return ints(k, {dflt})[0]; }
  double real(const std::string& k, double dflt) const {
    const auto v = strings(k, {});
    return v.empty() ? dflt : std::stod(v[0]);
  }
  std::string string(const std::string& k, const std::string& dflt) const { return strings(k, {dflt})[0]; }

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

struct Timing {
  double median = 0, min = 0;
  std::vector<double> samples;
};

// Runs setup() then body() `repeats` times after `warmup` untimed runs; body is timed between fences of
// exec. Returns the median and the minimum of the timed runs.
template <class ExecSpace>
Timing time_runs(const ExecSpace& exec, int warmup, int repeats, const std::function<void()>& setup,
                 const std::function<void()>& body) {
  Timing t;
  for (int r = 0; r < warmup + repeats; ++r) {
    setup();
    qgml::fence(exec, "qgml::bench::before");
    Kokkos::Timer timer;
    body();
    qgml::fence(exec, "qgml::bench::after");
    const double s = timer.seconds();
    if (r >= warmup) t.samples.push_back(s);
  }
  std::vector<double> sorted = t.samples;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t m = sorted.size();
  t.median = m % 2 ? sorted[m / 2] : 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]);
  t.min = sorted.front();
  return t;
}

// One JSON object on one line, keys in insertion order; non-finite numbers are written as null.
class JsonLine {
 public:
  template <class T>
  JsonLine& add(const std::string& key, const T& value) {
    j_[key] = value;
    return *this;
  }
  std::string str() const { return j_.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace); }

 private:
  nlohmann::ordered_json j_ = nlohmann::ordered_json::object();
};

// Settings every line carries: Kokkos version and space, concurrency, OpenMP environment, revision.
template <class ExecSpace>
JsonLine context(const std::string& suite, const std::string& impl) {
  JsonLine j;
  j.add("suite", suite).add("impl", impl);
  j.add("kokkos_version", std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) +
                              "." + std::to_string(KOKKOS_VERSION % 100));
  j.add("execution_space", ExecSpace::name());
  j.add("threads", int(ExecSpace().concurrency()));
  const char* omp = std::getenv("OMP_NUM_THREADS");
  j.add("omp_num_threads", omp ? omp : "");
  j.add("qgml_version", QGML_VERSION_STRING);
  j.add("git_revision", QGML_GIT_REVISION);
  return j;
}

// Prints the line and appends it to the file named by --out, if any.
inline void emit(const JsonLine& line, const std::string& out_path) {
  std::printf("%s\n", line.str().c_str());
  std::fflush(stdout);
  if (!out_path.empty()) {
    std::ofstream out(out_path, std::ios::app);
    out << line.str() << "\n";
  }
}

}  // namespace qgml::bench
