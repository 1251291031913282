// qgml sample RUN_DIR: draws from p(x) ~ exp(-beta E_0(x)) of a trained run (sample/chain_sampler.hpp)
// into a sample directory:
//   sample.json     the settings, every automatic choice, and the results (step size, acceptance,
//                   split R-hat and ESS per coordinate, time);
//   samples.npy     (draws, chains, D) float64, every thin-th state after warm-up, in the data's
//                   coordinates (the run's standardisation undone);
//   acceptance.npy  (chains) float64: each chain's mean Metropolis probability after warm-up (for ULA
//                   the probability MALA would have had);
//   state.npy       the sampler's state (model coordinates), written atomically after samples.npy: the
//                   commit point of a checkpoint, from which --resume continues exactly.
#include "sample/sample_command.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "qgml/common/file_error.hpp"
#include "qgml/common/random.hpp"
#include "qgml/io/configuration_io.hpp"
#include "qgml/io/npy.hpp"
#include "qgml/sample/chain_diagnostics.hpp"
#include "qgml/sample/chain_sampler.hpp"
#include "qgml/train/checkpoint.hpp"
#include "qgml/version.hpp"

#include "common/format.hpp"
#include "common/json_file.hpp"
#include "common/text_file.hpp"
#include "data/data_source.hpp"
#include "run/run_directory.hpp"
#include "sample/sample_model.hpp"
#include "sample/sample_options.hpp"
#include "sample/sample_setup.hpp"
#include "sample/sample_state.hpp"
#include "settings/config.hpp"

namespace qgml::app {

namespace fs = std::filesystem;
using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;

namespace {

template <class Real>
int sample(SampleSetup s, bool resume, bool quiet) {
  const Exec exec;
  Precision precision = Precision::double_precision;
  const std::string matrices = (fs::path(s.run_dir) / "final_matrices.npy").string();
  if (!fs::exists(matrices))
    throw Error("'" + s.run_dir + "' has no final_matrices.npy: not a finished qgml run directory");
  const HostMatrices m = load_matrices(matrices, &precision);
  const auto config = to_configuration<Real>(m, exec);
  const int d = m.D, n = m.N;
  const Affine affine = run_standardization(s.run_dir, d);
  const std::string fingerprint = model_fingerprint(m, affine);
  if (resume && s.model_fingerprint.empty())
    throw Error("qgml sample --resume " + s.out +
                ": its sample.json records no model fingerprint (a sample directory of an older qgml), so its "
                "draws cannot be checked against the model of " +
                s.run_dir + "; start a new sample directory: qgml sample " + s.run_dir + " --out NEW_DIR");
  if (resume && s.model_fingerprint != fingerprint)
    throw Error("qgml sample --resume " + s.out + ": the model of " + s.run_dir +
                " has changed since this sample directory was started (its matrices or standardisation: "
                "fingerprint " +
                s.model_fingerprint + " then, " + fingerprint +
                " now; was the run retrained?); resuming would mix the draws of two models; start a new sample "
                "directory: qgml sample " +
                s.run_dir + " --out NEW_DIR");
  s.model_fingerprint = fingerprint;

  ChainSampler<Real, Exec> sampler(d, n, s.chains, s.sampler);
  const std::string state_path = (fs::path(s.out) / "state.npy").string();
  const std::string samples_path = (fs::path(s.out) / "samples.npy").string();
  std::vector<double> samples;  // (draws, chains, D), data coordinates
  if (resume) {
    sampler.restore(exec, config, unpack_state(state_path, s.chains, d));
    // Fewer steps than already done would divide the acceptance of every step done by the fewer steps
    // asked for (an acceptance above 1) and keep more draws than --steps: refused before anything is written.
    if (sampler.iteration() > long(s.sampler.warmup) + s.steps)
      throw Error(
          format("qgml sample --resume %s: --steps %ld is below the %ld sampling steps already done "
                 "(iteration %ld, %d of warm-up); give --steps %ld or more to sample longer",
                 s.out.c_str(), s.steps, sampler.iteration() - s.sampler.warmup, sampler.iteration(), s.sampler.warmup,
                 sampler.iteration() - s.sampler.warmup));
    const long keep = draws_after(sampler.iteration(), s);
    if (keep > 0) {
      const NpyArray a = read_npy(samples_path);
      if (a.type != NpyType::float64 || a.shape.size() != 3 || a.shape[1] != std::size_t(s.chains) ||
          a.shape[2] != std::size_t(d) || a.shape[0] < std::size_t(keep))
        throw Error("'" + samples_path + "': expected float64 (>= " + std::to_string(keep) + ", " +
                    std::to_string(s.chains) + ", " + std::to_string(d) + ") draws for the state in " + state_path);
      samples.resize(std::size_t(keep) * s.chains * d);
      std::memcpy(samples.data(), a.bytes.data(), samples.size() * sizeof(double));
    }
  } else {
    RealMatrix<Real, Mem> x0;
    if (s.init == "data") {
      const DataSection data = read_data_settings(load_config((fs::path(s.run_dir) / "config.yaml").string(), {}));
      const auto points = load_data<Real>(exec, data);
      if (int(points.extent(1)) != d)
        throw Error("the run's data have D = " + std::to_string(points.extent(1)) +
                    " but its matrices D = " + std::to_string(d));
      x0 = data_chain_start<Real>(exec, s.chains, points, s.sampler.seed);
    } else {
      x0 = gaussian_chain_start<Real>(exec, s.chains, std::vector<double>(std::size_t(d), 0.0), 1.0, s.sampler.seed);
    }
    sampler.start(exec, config, x0);
  }
  // Under the lock: the temporaries that an interrupted write left (the pid in their name has ended).
  if (resume)
    for (const std::string& path : remove_stale_temporaries(s.out))
      std::printf("removed %s: a temporary file of an interrupted write (its process has ended)\n", path.c_str());
  write_json_file((fs::path(s.out) / "sample.json").string(), settings_json(s));

  const long total = long(s.sampler.warmup) + s.steps;
  const std::size_t per_draw = std::size_t(s.chains) * d;
  // Draw slots per block: at most 200 iterations and 64 MiB of device buffer per block.
  const long slots =
      std::max(1L, std::min<long>(std::max(1, 200 / s.thin), long((64u << 20) / (per_draw * sizeof(Real)))));
  Kokkos::View<Real***, Kokkos::LayoutRight, Mem> draws("qgml::sample::draws", slots, s.chains, d);
  auto draws_host = Kokkos::create_mirror_view(draws);
  auto acceptance_host = Kokkos::create_mirror_view(sampler.acceptance_sum());
  auto step_host = Kokkos::create_mirror_view(sampler.step_size());

  const auto write_checkpoint = [&]() {
    write_npy(samples_path, NpyType::float64, {samples.size() / per_draw, std::size_t(s.chains), std::size_t(d)},
              samples.data());
    const std::vector<double> packed = pack_state(sampler.state(exec));
    write_npy(state_path, NpyType::float64, {packed.size()}, packed.data());
  };

  std::printf(
      "sampling %s: %d chains, %ld iterations (%d warm-up, %ld sampling, thin %d), beta %g, N = %d, D = %d, "
      "%s kernel on %s\n",
      to_string(s.sampler.kind).c_str(), s.chains, total, s.sampler.warmup, s.steps, s.thin, s.sampler.beta, n, d,
      to_string(sampler.kernel()), Exec::name());
  Kokkos::Timer timer, since_checkpoint, since_print;
  const long first = sampler.iteration();
  while (sampler.iteration() < total) {
    int used = 0;
    while (sampler.iteration() < total && used < slots) {
      sampler.step(exec, config);
      const long it = sampler.iteration();
      if (it > s.sampler.warmup && (it - s.sampler.warmup) % s.thin == 0) sampler.record(exec, draws, used++);
    }
    // Block boundary: the recorded draws and the statistics for the progress line come to the host.
    Kokkos::deep_copy(exec, draws_host, draws);
    Kokkos::deep_copy(exec, acceptance_host, sampler.acceptance_sum());
    Kokkos::deep_copy(exec, step_host, sampler.step_size());
    fence(exec, "qgml::sample::block");
    for (int u = 0; u < used; ++u)
      for (int c = 0; c < s.chains; ++c)
        for (int k = 0; k < d; ++k)
          samples.push_back(affine.mean[std::size_t(k)] + affine.scale * double(draws_host(u, c, k)));
    const long it = sampler.iteration();
    const bool done = it >= total;
    if (!quiet && (done || since_print.seconds() >= 2)) {
      const long sampled = std::max(0L, it - s.sampler.warmup);
      double acc = 0;
      for (int c = 0; c < s.chains; ++c) acc += acceptance_host(c);
      const double rate = double(it - first) * s.chains / std::max(timer.seconds(), 1e-9);
      if (sampled > 0)
        std::printf("  iteration %ld/%ld  step %.4g  acceptance %.3f  %.3g chain-steps/s\n", it, total,
                    step_host(step_eps), acc / (double(s.chains) * sampled), rate);
      else
        std::printf("  iteration %ld/%ld (warm-up)  step %.4g  %.3g chain-steps/s\n", it, total, step_host(step_eps),
                    rate);
      std::fflush(stdout);
      since_print.reset();
    }
    if (done || since_checkpoint.seconds() >= 30) {
      write_checkpoint();
      since_checkpoint.reset();
    }
  }
  const double seconds = timer.seconds();
  // The final statistics (also where no block ran: a finished sampling resumed with its own --steps).
  Kokkos::deep_copy(exec, acceptance_host, sampler.acceptance_sum());
  Kokkos::deep_copy(exec, step_host, sampler.step_size());
  fence(exec, "qgml::sample::statistics");

  // Acceptance per chain and the diagnostics of all draws.
  const long sampled = std::max(0L, total - s.sampler.warmup);
  std::vector<double> acceptance(std::size_t(s.chains));
  double mean_acceptance = 0;
  for (int c = 0; c < s.chains; ++c) {
    acceptance[std::size_t(c)] = sampled > 0 ? acceptance_host(c) / double(sampled) : 0.0;
    mean_acceptance += acceptance[std::size_t(c)] / s.chains;
  }
  write_npy((fs::path(s.out) / "acceptance.npy").string(), NpyType::float64, {std::size_t(s.chains)},
            acceptance.data());
  const std::size_t stored = samples.size() / per_draw;
  Kokkos::View<const double***, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> all(
      samples.data(), stored, std::size_t(s.chains), std::size_t(d));
  const ChainDiagnostics diag = chain_diagnostics(Kokkos::DefaultHostExecutionSpace(), all);
  double max_r_hat = 0, min_ess = 0;
  for (int k = 0; k < d; ++k) {
    max_r_hat = k == 0 ? diag.r_hat[0] : std::max(max_r_hat, diag.r_hat[std::size_t(k)]);
    min_ess = k == 0 ? diag.ess[0] : std::min(min_ess, diag.ess[std::size_t(k)]);
  }
  Json out = settings_json(s);
  out["results"] = {{"draws", stored},
                    {"iterations", total},
                    {"step_size", step_host(step_eps)},
                    {"mean_acceptance", mean_acceptance},
                    {"r_hat", diag.r_hat},
                    {"ess", diag.ess},
                    {"mean", diag.mean},
                    {"sd", diag.sd},
                    {"max_r_hat", max_r_hat},
                    {"min_ess", min_ess},
                    {"seconds_this_invocation", seconds},
                    {"chain_steps_per_second", double(total - first) * s.chains / std::max(seconds, 1e-9)},
                    {"kernel", to_string(sampler.kernel())},
                    {"execution_space", Exec::name()},
                    {"qgml_version", QGML_VERSION_STRING},
                    {"coordinates", affine.scale != 1 || std::any_of(affine.mean.begin(), affine.mean.end(),
                                                                     [](double v) { return v != 0; })
                                        ? "data (the run's standardisation undone)"
                                        : "data"}};
  write_json_file((fs::path(s.out) / "sample.json").string(), out);
  std::printf("step size %.4g, mean acceptance %.3f; %zu draws x %d chains\n", step_host(step_eps), mean_acceptance,
              stored, s.chains);
  for (int k = 0; k < d; ++k)
    std::printf("  x%d: mean %.4g  sd %.4g  split R-hat %.4f  ESS %.0f\n", k, diag.mean[std::size_t(k)],
                diag.sd[std::size_t(k)], diag.r_hat[std::size_t(k)], diag.ess[std::size_t(k)]);
  if (stored < 4)
    std::printf("the diagnostics need at least 4 draws per chain (%zu stored): sample longer or thin less\n", stored);
  else if (!(max_r_hat < 1.01))
    std::printf("warning: split R-hat %.3f >= 1.01: the chains have not mixed; sample longer (--steps, --warmup)\n",
                max_r_hat);
  std::printf("outputs: %s/{samples.npy, acceptance.npy, sample.json, state.npy}\n", s.out.c_str());
  return 0;
}

}  // namespace

int sample_command(const std::vector<std::string>& args, std::string* out_dir) {
  std::map<std::string, std::string> o = sample_defaults();
  std::map<std::string, bool> given;
  std::string run_dir, resume;
  bool quiet = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--quiet" || a == "-q") {
      quiet = true;
      continue;
    }
    if (a.rfind("--", 0) != 0) {
      if (!run_dir.empty()) throw Error("qgml sample: unexpected argument '" + a + "' (one run directory)");
      run_dir = a;
      continue;
    }
    std::string key = a.substr(2), value;
    const std::size_t eq = key.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    }
    if (key != "resume" && !o.count(key)) {
      std::string known;
      for (const auto& [k, v] : sample_defaults()) known += " --" + k;
      throw Error("qgml sample: unknown option --" + key + " (options: --resume" + known + ")");
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) throw Error("qgml sample: option --" + key + " needs a value");
      value = args[++i];
    }
    if (key == "resume")
      resume = value;
    else {
      o[key] = value;
      given[key] = true;
    }
  }

  SampleSetup s;
  // Held until sampling ends: one qgml process at a time writes a sample directory.
  RunLock lock;
  if (!resume.empty()) {
    if (!run_dir.empty()) throw Error("qgml sample --resume takes the sample directory's own run; give no RUN_DIR");
    for (const auto& [k, v] : given)
      if (k != "steps")
        throw Error("qgml sample --resume: --" + k + " cannot change on resume (only --steps, to sample longer)");
    const std::string path = (fs::path(resume) / "sample.json").string();
    if (!fs::exists(path) || !fs::exists(fs::path(resume) / "state.npy"))
      throw Error("--resume " + resume + ": no sample.json and state.npy there (not a qgml sample directory)");
    refuse_links(resume, "sample directory");
    lock = RunLock(resume, "sample directory");
    Json j;
    try {
      j = Json::parse(read_text(path));
      s.run_dir = j.at("run").get<std::string>();
      s.sampler.kind = parse_sampler_kind(j.at("sampler").get<std::string>());
      s.chains = j.at("chains").get<int>();
      s.steps =
          given.count("steps") ? strict_integer("steps", o.at("steps"), 0, 1000000000L) : j.at("steps").get<long>();
      s.sampler.warmup = j.at("warmup").get<int>();
      s.thin = j.at("thin").get<int>();
      s.sampler.beta = j.at("beta").get<double>();
      s.init = j.at("init").get<std::string>();
      s.sampler.step_size = j.at("step_size").get<double>();
      s.sampler.adapt = j.at("adapt").get<bool>();
      s.sampler.target_acceptance = j.at("target_acceptance").get<double>();
      s.sampler.leapfrog_steps = j.at("leapfrog").get<int>();
      s.sampler.seed = j.at("seed").get<std::uint64_t>();
      if (j.contains("model_fingerprint")) s.model_fingerprint = j.at("model_fingerprint").get<std::string>();
      const Json& a = j.at("automatic");
      s.thin_origin = a.at("thin").get<std::string>();
      s.init_origin = a.at("init").get<std::string>();
      s.step_origin = a.at("step_size").get<std::string>();
      s.target_origin = a.at("target_acceptance").get<std::string>();
    } catch (const Json::exception& e) {
      throw Error("'" + path + "': not a qgml sample.json (" + e.what() + ")");
    }
    if (s.chains < 1 || s.thin < 1 || s.sampler.warmup < 0)
      throw Error("'" + path + "': invalid chains, thin or warmup");
    validate(s.sampler);
    s.out = resume;
    refuse_links(s.out, "sample directory");
  } else {
    if (run_dir.empty()) throw Error("qgml sample: give a run directory (qgml sample RUN_DIR [options])");
    if (!fs::is_directory(run_dir)) throw Error("qgml sample: '" + run_dir + "' is not a directory");
    s.run_dir = run_dir;
    s.chains = int(strict_integer("chains", o.at("chains"), 1, 100000000L));
    s.steps = strict_integer("steps", o.at("steps"), 0, 1000000000L);
    s.sampler = sampler_settings(o);
    if (o.at("step-size") == "auto") {
      s.step_origin = s.sampler.warmup > 0
                          ? format("auto: start at %.4g, dual averaging over the %d warm-up iterations",
                                   initial_step_size(s.sampler), s.sampler.warmup)
                          : format("auto: %.4g (no warm-up, not adapted)", initial_step_size(s.sampler));
    } else {
      s.step_origin = "given (not adapted)";
    }
    if (o.at("target-acceptance") == "auto") {
      s.target_origin =
          format("auto: %.3f for %s", default_target_acceptance(s.sampler.kind), to_string(s.sampler.kind).c_str());
    } else {
      s.target_origin = "given";
    }
    validate(s.sampler);
    const fs::path matrices = fs::path(run_dir) / "final_matrices.npy";
    if (!fs::exists(matrices))
      throw Error("'" + run_dir + "' has no final_matrices.npy: not a finished qgml run directory");
    const long d_model = load_matrices(matrices.string()).D;
    if (o.at("thin") == "auto") {
      // At most ~1000 stored draws per chain (enough for the diagnostics) and ~2^24 stored numbers
      // (128 MiB in memory and on disk), at least 10 draws per chain.
      const long budget = std::max(10L, std::min(1000L, (1L << 24) / (long(s.chains) * d_model)));
      s.thin = int(std::max(1L, (s.steps + budget - 1) / budget));
      s.thin_origin = format("auto: %d (at most %ld draws per chain)", s.thin, budget);
    } else {
      s.thin = int(strict_integer("thin", o.at("thin"), 1, 1000000000L));
      s.thin_origin = "given";
    }
    const bool has_config = fs::exists(fs::path(run_dir) / "config.yaml");
    // Points handed over in memory (data.array) are not in the run directory: no data to start from.
    const std::string in_memory =
        has_config ? read_data_settings(load_config((fs::path(run_dir) / "config.yaml").string(), {})).array : "";
    if (o.at("init") == "auto") {
      s.init = has_config && in_memory.empty() ? "data" : "gaussian";
      s.init_origin = !has_config         ? "auto: gaussian (the run has no config.yaml to read its data from)"
                      : in_memory.empty() ? "auto: data (chains start on the run's training points)"
                                          : "auto: gaussian (the run's points, data.array '" + in_memory +
                                                "', were handed over in memory and are not in the run directory)";
    } else {
      s.init = o.at("init");
      if (s.init != "data" && s.init != "gaussian") throw Error("--init = '" + s.init + "': expected data or gaussian");
      if (s.init == "data" && !has_config)
        throw Error("--init data: '" + run_dir + "' has no config.yaml to read the training data from");
      s.init_origin = "given";
    }
    s.out = o.at("out").empty() ? (fs::path(run_dir) / ("samples-" + to_string(s.sampler.kind))).string() : o.at("out");
    if (fs::exists(fs::path(s.out) / "state.npy"))
      throw Error("'" + s.out + "' already holds a sampling run: continue it with qgml sample --resume " + s.out +
                  ", or choose another --out");
    if (o.at("out").empty()) refuse_links(run_dir, "run directory");  // --out is then one of its entries
    std::error_code ec;
    fs::create_directories(s.out, ec);
    if (ec) throw FileError("output directory '" + s.out + "': cannot create: " + ec.message());
    refuse_links(s.out, "sample directory");
    lock = RunLock(s.out, "sample directory");
    // Again under the lock: a sampler that started into the same --out meanwhile has written its state.
    if (fs::exists(fs::path(s.out) / "state.npy"))
      throw Error("'" + s.out + "' already holds a sampling run: continue it with qgml sample --resume " + s.out +
                  ", or choose another --out");
    check_writable_directory(s.out);
  }
  if (out_dir) *out_dir = s.out;
  std::printf("automatic: thin %s\n", s.thin_origin.c_str());
  std::printf("automatic: init %s\n", s.init_origin.c_str());
  std::printf("automatic: step size %s\n", s.step_origin.c_str());
  std::printf("automatic: target acceptance %s\n", s.target_origin.c_str());
  Precision precision = Precision::double_precision;
  const std::string matrices = (fs::path(s.run_dir) / "final_matrices.npy").string();
  if (fs::exists(matrices)) load_matrices(matrices, &precision);
  return precision == Precision::single_precision ? sample<float>(s, !resume.empty(), quiet)
                                                  : sample<double>(s, !resume.empty(), quiet);
}

}  // namespace qgml::app
