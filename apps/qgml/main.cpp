// The qgml program: train matrix configurations, estimate intrinsic dimensions, evaluate losses, sample.
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "commands.hpp"
#include "config.hpp"
#include "parallel.hpp"

namespace {

void usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage:\n"
      "  qgml train DATA.csv|DATA.npy [--section.key value ...] [--quiet]   (every other setting default)\n"
      "  qgml train CONFIG.yaml [--section.key value ...] [--quiet]\n"
      "  qgml train --resume RUN_DIR [--section.key value ...]\n"
      "  qgml tune CONFIG.yaml [--section.key value ...] [--batches 64,128,...] [--epochs-per-trial 3]\n"
      "            [--memory-budget BYTES|auto] [--json FILE]\n"
      "  qgml estimate --matrices M.npy --data X.csv|X.npy [--metric quantum|covariance|fubini_study]\n"
      "                [--min-gap-ratio 2] [--noise-floor 1e-3] [--first-gap-exponent 0.75] [--out DIR]\n"
      "                [--precision double|float]\n"
      "  qgml eval --matrices M.npy --data X.csv|X.npy [--w 0.25] [--penalty none|frobenius|frobenius_squared]\n"
      "            [--penalty-weight 0] [--out DIR] [--precision double|float]\n"
      "  qgml sample RUN_DIR [--sampler ula|mala|hmc] [--chains 1000] [--steps 1000] [--warmup 500]\n"
      "              [--beta 1] [--init data|gaussian] [--thin auto] [--step-size auto] [--leapfrog 10]\n"
      "              [--target-acceptance auto] [--seed 1] [--out DIR] [--quiet]\n"
      "  qgml sample --resume SAMPLE_DIR [--steps S]\n"
      "  qgml generate --data.generator NAME [--data.key value ...] --out X.csv|X.npy\n"
      "  qgml info\n"
      "  qgml fuzzy-sphere [--N 3] [--T 2500]\n"
      "Kokkos options (--kokkos-threads=N with Kokkos 3.x, --kokkos-num-threads=N with 4.x,\n"
      "--kokkos-disable-warnings, ...) are accepted everywhere.\n"
      "\nSettings of qgml train (config file sections, or --section.key value on the command line),\n"
      "with their defaults:\n%s",
      qgml::app::settings_help().c_str());
}

}  // namespace

int main(int argc, char* argv[]) {
  if (argc < 2 || std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help" || std::string(argv[1]) == "help") {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
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
    Kokkos::ScopeGuard guard(argc, argv);  // removes the --kokkos-* arguments
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
      std::fprintf(stderr, "qgml: error: %s\n", e.what());
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
