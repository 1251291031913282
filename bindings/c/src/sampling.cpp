// Sampling from a trained run (docs/math.md section 10) through the program's own command
// (qgml::app::sample_command), with the options as an argument vector: no shell, no parsing of a line.
#include <cstdint>
#include <string>
#include <vector>

#include "c_api_internal.hpp"
#include "sample/sample_command.hpp"

namespace {

using qgml::capi::Failure;
using qgml::capi::guarded;
using qgml::capi::require;
using qgml::capi::require_pointer;

// The program's exit status as the C status: 0 is QGML_OK, anything else a runtime failure.
void require_exit(int code, const char* f) {
  if (code != 0)
    throw Failure{QGML_ERROR_RUNTIME, std::string(f) + ": qgml sample ended with status " + std::to_string(code)};
}

}  // namespace

extern "C" {

int qgml_sample(const char* run_dir, const char* const* keys, const char* const* values, int n, int quiet, char* buf,
                size_t size, size_t* needed) {
  const char* f = "qgml_sample";
  return guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    require_pointer(run_dir, f, "run_dir");
    require(n >= 0, f, "n = " + std::to_string(n) + ": expected the number of options, >= 0");
    if (n > 0) {
      require_pointer(keys, f, "keys");
      require_pointer(values, f, "values");
    }
    std::vector<std::string> args{run_dir};
    for (int i = 0; i < n; ++i) {
      require(keys[i] != nullptr && values[i] != nullptr, f,
              "option " + std::to_string(i) + ": a key or value is NULL");
      const std::string key = keys[i];
      require(!key.empty() && key[0] != '-' && key.find('=') == std::string::npos && key != "resume" && key != "quiet",
              f,
              "option " + std::to_string(i) + " '" + key +
                  "': expected an option name without \"--\" or \"=\" (resume: qgml_sample_resume; quiet: the "
                  "argument)");
      args.push_back("--" + key);
      args.push_back(values[i]);
    }
    if (quiet) args.push_back("--quiet");
    // The directory's path: --out, or RUN_DIR/samples-<sampler> (the longest sampler name: 4 characters).
    // Checked before sampling, so that a small buffer costs no draws.
    std::size_t bound = std::string(run_dir).size() + std::string("/samples-mala").size() + 1;
    for (int i = 0; i < n; ++i)
      if (std::string(keys[i]) == "out") bound = std::string(values[i]).size() + 1;
    const bool want_path = buf != nullptr || size != 0 || needed != nullptr;
    if (want_path) {
      require_pointer(buf, f, "buf");
      require(size >= bound, f,
              "buf has " + std::to_string(size) + " bytes; the sample directory's path may need " +
                  std::to_string(bound) + " (the length of --out, or of run_dir plus 14, and 1)");
    }
    qgml::capi::require_kokkos(f);
    std::string out;
    require_exit(qgml::app::sample_command(args, &out), f);
    if (want_path) qgml::capi::copy_text(out, buf, size, needed, f);
  });
}

int qgml_sample_resume(const char* sample_dir, int64_t steps, int quiet) {
  const char* f = "qgml_sample_resume";
  return guarded(f, QGML_ERROR_INVALID_ARGUMENT, [&] {
    require_pointer(sample_dir, f, "sample_dir");
    std::vector<std::string> args{"--resume", sample_dir};
    if (steps > 0) {
      args.push_back("--steps");
      args.push_back(std::to_string(steps));
    }
    if (quiet) args.push_back("--quiet");
    qgml::capi::require_kokkos(f);
    require_exit(qgml::app::sample_command(args), f);
  });
}

}  // extern "C"
