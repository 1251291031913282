// The qgml program: train matrix configurations, estimate intrinsic dimensions, evaluate losses, sample.
#include <Kokkos_Core.hpp>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "qgml/io/parse_number.hpp"

#include "commands.hpp"
#include "run/parallel.hpp"
#include "settings/config.hpp"

namespace {

// The command lines of the usage text (without the settings).
const char* const command_lines =
    "usage:\n"
    "  qgml train DATA.csv|DATA.npy [--section.key value ...] [--quiet]   (every other setting default)\n"
    "  qgml train CONFIG.yaml [--section.key value ...] [--quiet]\n"
    "  qgml train --resume RUN_DIR [--section.key value ...]\n"
    "  qgml tune CONFIG.yaml [--section.key value ...] [--batches 64,128,...] [--epochs-per-trial 3]\n"
    "            [--memory-budget BYTES|auto] [--json FILE]\n"
    "  qgml estimate --matrices M.npy --data X.csv|X.npy [--metric quantum|covariance|fubini_study]\n"
    "                [--min-gap-ratio 2] [--noise-floor 1e-3] [--first-gap-exponent 0.75] [--out DIR]\n"
    "                [--kernel auto|packed|team|separate] [--chunk 25000] [--precision double|float]\n"
    "                [--scales 10,20,50,100,200,400|none] [--analysis.key value ...]\n"
    "  qgml eval --matrices M.npy --data X.csv|X.npy [--w W] [--penalty none|frobenius|frobenius_squared]\n"
    "            [--penalty-weight 0] [--out DIR] [--precision double|float]\n"
    "  qgml sample RUN_DIR [--sampler ula|mala|hmc] [--chains 1000] [--steps 1000] [--warmup 500]\n"
    "              [--beta 1] [--init data|gaussian] [--thin auto] [--step-size auto] [--leapfrog 10]\n"
    "              [--target-acceptance auto] [--seed 1] [--out DIR] [--quiet]\n"
    "  qgml sample --resume SAMPLE_DIR [--steps S]\n"
    "  qgml train DATA.csv --task regression|classification [--data.target_column -1] [--section.key value ...]\n"
    "  qgml predict --run RUN_DIR --data X.csv|X.npy [--output FILE] [--quiet]\n"
    "  qgml generate --data.generator NAME [--data.key value ...] --out X.csv|X.npy\n"
    "  qgml info\n"
    "  qgml fuzzy-sphere [--N 3] [--T 2500]\n";

void usage(std::FILE* out) {
  std::fprintf(out,
               "%s"
               "Kokkos options (--kokkos-threads=N with Kokkos 3.x, --kokkos-num-threads=N with 4.x,\n"
               "--kokkos-disable-warnings, ...) are accepted everywhere; at most 1024 threads.\n"
               "\nSettings of qgml train (config file sections, or --section.key value on the command line),\n"
               "with their defaults:\n%s",
               command_lines, qgml::app::settings_help().c_str());
}

// `qgml COMMAND --help`: the usage lines of COMMAND (with their continuation lines) and, for the
// commands that take the training settings, those; the whole usage for an unknown command. Handled
// before Kokkos starts, which would otherwise take --help as its own.
void command_usage(const std::string& command) {
  const std::string text = command_lines, prefix = "  qgml " + command + " ";
  std::string lines;
  bool in_command = false;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    start = end == std::string::npos ? text.size() : end + 1;
    if (line.rfind("  qgml ", 0) == 0)
      in_command = line.rfind(prefix, 0) == 0 || line == "  qgml " + command;
    else if (line.rfind("    ", 0) != 0)
      in_command = false;
    if (in_command) lines += line + "\n";
  }
  if (lines.empty()) {
    usage(stdout);
    return;
  }
  std::printf("usage:\n%s", lines.c_str());
  if (command == "train" || command == "tune")
    std::printf(
        "\nSettings (config file sections, or --section.key value on the command line), with their "
        "defaults:\n%s",
        qgml::app::settings_help().c_str());
}

// The Kokkos options that take a number, with the smallest value that means something: a thread or
// NUMA count below 1 makes Kokkos abort (SIGABRT), so they are checked here, before Kokkos (and MPI)
// start and before any command creates files. Kokkos 3.x and 4.x names.
// Thread counts above max_threads are refused: the OpenMP runtime fails beyond some tens of thousands
// and then ends the process. The C interface has the same limit (QGML_MAX_THREADS in c_api.h).
constexpr long long max_threads = 1024;
struct KokkosNumberOption {
  const char* name;
  long long min, max;
  const char* what;
};
constexpr KokkosNumberOption kokkos_number_options[] = {
    {"--kokkos-threads", 1, max_threads, "a number of threads"},
    {"--kokkos-num-threads", 1, max_threads, "a number of threads"},
    {"--threads", 1, max_threads, "a number of threads"},
    {"--kokkos-numa", 1, 1000000, "a number of NUMA regions"},
    {"--numa", 1, 1000000, "a number of NUMA regions"},
    {"--kokkos-device-id", 0, 1000000, "a device id"},
    {"--kokkos-device", 0, 1000000, "a device id"},
    {"--device-id", 0, 1000000, "a device id"},
    {"--device", 0, 1000000, "a device id"},
};

// The first problem with the Kokkos options in argv, or "".
std::string kokkos_option_problem(int argc, char* argv[]) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    for (const auto& o : kokkos_number_options) {
      const std::string name = o.name;
      if (a.compare(0, name.size(), name) != 0) continue;
      if (a.size() > name.size() &&
          (std::isalnum(static_cast<unsigned char>(a[name.size()])) || a[name.size()] == '-' || a[name.size()] == '_'))
        continue;  // a longer name, e.g. --kokkos-threads-for-x
      long long v = 0;
      const bool has_value = a.size() > name.size() && a[name.size()] == '=';
      const std::string text = has_value ? a.substr(name.size() + 1) : "";
      if (!has_value || !qgml::parse_integer(text, v) || v < o.min || v > o.max)
        return name + (has_value ? " = '" + text + "'" : std::string(" without a value")) + ": expected " + o.what +
               ", an integer in [" + std::to_string(o.min) + ", " + std::to_string(o.max) + "], written " + name + "=N";
    }
  }
  for (const char* variable : {"KOKKOS_NUM_THREADS", "KOKKOS_NUMA"}) {
    const char* value = std::getenv(variable);
    const long long max = std::string(variable) == "KOKKOS_NUM_THREADS" ? max_threads : 1000000;
    long long v = 0;
    if (value && (!qgml::parse_integer(value, v) || v < 1 || v > max))
      return std::string("environment variable ") + variable + " = '" + value + "': expected an integer in [1, " +
             std::to_string(max) + "]";
  }
  return "";
}

// For an allocation that failed: the size options given on the command line, which are what to reduce.
std::string size_options(int argc, char* argv[]) {
  static const char* const sizes[] = {"--model.N",
                                      "--data.points",
                                      "--data.dimension",
                                      "--training.batch_size",
                                      "--analysis.chunk",
                                      "--profiling.max_events",
                                      "--N",
                                      "--T",
                                      "--chains",
                                      "--steps"};
  std::string given;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    for (const char* s : sizes) {
      const std::string name = s;
      if (a == name && i + 1 < argc)
        given += (given.empty() ? "" : ", ") + name + " " + argv[i + 1];
      else if (a.rfind(name + "=", 0) == 0)
        given += (given.empty() ? "" : ", ") + a;
    }
  }
  return given;
}

}  // namespace

int main(int argc, char* argv[]) {
  if (argc < 2 || std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help" || std::string(argv[1]) == "help") {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (int i = 2; i < argc; ++i)
    if (std::string(argv[i]) == "-h" || std::string(argv[i]) == "--help") {
      command_usage(argv[1]);
      return 0;
    }
  if (const std::string problem = kokkos_option_problem(argc, argv); !problem.empty()) {
    std::fprintf(stderr, "qgml: error: %s\n", problem.c_str());
    return 2;
  }
  int code = 0;
  // With MPI every rank runs this; errors raised collectively (qgml::CollectiveError) reach every rank
  // with the same message and end the job normally, any other error on one rank aborts the job.
  qgml::app::ParallelEnvironment parallel(argc, argv);
  // --quiet: Kokkos' own warnings (e.g. on OMP_PROC_BIND, printed on stdout) are silenced too.
  std::vector<char*> arguments(argv, argv + argc);
  static char disable_warnings[] = "--kokkos-disable-warnings";
  for (int i = 2; i < argc; ++i)
    if (std::string(argv[i]) == "--quiet" || std::string(argv[i]) == "-q") {
      arguments.push_back(disable_warnings);
      break;
    }
  arguments.push_back(nullptr);
  argc = int(arguments.size()) - 1;
  argv = arguments.data();
  {
    std::optional<Kokkos::ScopeGuard> guard;
    try {
      guard.emplace(argc, argv);  // removes the --kokkos-* arguments
    } catch (const std::exception& e) {
      std::fprintf(stderr, "qgml: error: Kokkos could not start: %s\n", e.what());
      return 2;
    }
    const std::string command = argv[1];
    const std::vector<std::string> args(argv + 2, argv + argc);
    try {
      const int ranks = qgml::app::communicator().size();
      if (ranks > 1 && command != "train" && command != "estimate")
        throw qgml::CollectiveError("qgml " + command + " runs in one process; under MPI (" + std::to_string(ranks) +
                                    " ranks) only train and estimate are distributed");
      if (command == "train")
        code = qgml::app::train_command(args);
      else if (command == "tune")
        code = qgml::app::tune_command(args);
      else if (command == "estimate")
        code = qgml::app::estimate_command(args);
      else if (command == "eval")
        code = qgml::app::eval_command(args);
      else if (command == "generate")
        code = qgml::app::generate_command(args);
      else if (command == "info")
        code = qgml::app::info_command();
      else if (command == "sample")
        code = qgml::app::sample_command(args);
      else if (command == "predict")
        code = qgml::app::predict_command(args);
      else if (command == "fuzzy-sphere")
        code = qgml::app::fuzzy_sphere_command(args);
      else {
        std::fprintf(stderr, "qgml: unknown command '%s'\n", command.c_str());
        usage(stderr);
        code = 2;
      }
    } catch (const qgml::CollectiveError& e) {
      std::fprintf(stderr, "qgml: error: %s\n", e.what());
      code = 1;
    } catch (const std::exception& e) {
      // An allocation that failed (std::bad_alloc, e.g. --N 100000) is named as such, with the sizes given.
      if (dynamic_cast<const std::bad_alloc*>(&e)) {
        const std::string sizes = size_options(argc, argv);
        std::fprintf(stderr, "qgml: error: out of memory: an allocation failed (%s) in qgml %s; %s\n", e.what(),
                     argv[1],
                     sizes.empty() ? "the data or the settings need more memory than this machine can allocate"
                                   : ("reduce the sizes given (" + sizes + ")").c_str());
      } else {
        std::fprintf(stderr, "qgml: error: %s\n", e.what());
      }
      code = 1;
      auto& comm = qgml::app::communicator();
      if (comm.size() > 1) {
        std::fprintf(stderr, "qgml: rank %d of %d failed alone; ending the job\n", comm.rank(), comm.size());
        std::fflush(stderr);
        comm.abort(code);
      }
    }
  }
  return code;
}
