// The settings of a sampling run (SampleSetup), as sample.json records them.
#pragma once

#include <string>

#include "qgml/sample/sampler_settings.hpp"

#include "common/json_file.hpp"

namespace qgml::app {

// A sampling run: the trained run and the sample directory, the sampler's settings, the chains, steps and
// thinning, and where each automatic choice came from.
struct SampleSetup {
  std::string run_dir, out;
  SamplerSettings sampler;
  int chains = 0;
  long steps = 0;
  int thin = 1;
  std::string init;  // data | gaussian
  std::string thin_origin, init_origin, step_origin, target_origin;
  // model_fingerprint of the run's model when the sample directory was started ("": not recorded, a
  // sample directory written before the fingerprint was: --resume refuses it).
  std::string model_fingerprint;
};

// The settings part of sample.json (format, run, sampler settings, model fingerprint, automatic choices).
Json settings_json(const SampleSetup& s);

// Draws stored after `iteration` iterations.
long draws_after(long iteration, const SampleSetup& s);

}  // namespace qgml::app
