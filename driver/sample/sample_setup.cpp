// The settings of a sampling run (sample_setup.hpp).
#include "sample/sample_setup.hpp"

#include <filesystem>

namespace qgml::app {

namespace fs = std::filesystem;

Json settings_json(const SampleSetup& s) {
  return Json{{"format", "qgml-sample"},
              {"version", 1},
              {"run", fs::absolute(s.run_dir).string()},
              {"sampler", to_string(s.sampler.kind)},
              {"chains", s.chains},
              {"steps", s.steps},
              {"warmup", s.sampler.warmup},
              {"thin", s.thin},
              {"beta", s.sampler.beta},
              {"init", s.init},
              {"step_size", s.sampler.step_size},
              {"adapt", s.sampler.adapt},
              {"target_acceptance", resolved_target_acceptance(s.sampler)},
              {"leapfrog", s.sampler.leapfrog_steps},
              {"seed", s.sampler.seed},
              {"model_fingerprint", s.model_fingerprint},
              {"automatic",
               {{"thin", s.thin_origin},
                {"init", s.init_origin},
                {"step_size", s.step_origin},
                {"target_acceptance", s.target_origin}}}};
}

long draws_after(long iteration, const SampleSetup& s) {
  const long sampled = iteration - s.sampler.warmup;
  return sampled > 0 ? sampled / s.thin : 0;
}

}  // namespace qgml::app
