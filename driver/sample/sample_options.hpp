// The options of qgml sample: their defaults and the checked values of integer and number options.
#pragma once

#include <map>
#include <string>

#include "qgml/sample/sampler_settings.hpp"

namespace qgml::app {

// The options and their defaults ("auto": chosen and printed).
const std::map<std::string, std::string>& sample_defaults();

// The value `text` of option --key: an integer in [lo, hi]; an Error naming the option otherwise.
long strict_integer(const std::string& key, const std::string& text, long lo, long hi);

// The value `text` of option --key: a number; an Error naming the option otherwise.
double strict_real(const std::string& key, const std::string& text);

// The sampler's settings from the options (every key of sample_defaults() present): --sampler, --warmup,
// --beta, --leapfrog, --seed; --step-size auto is 0 (adapted during warm-up), a given one is not adapted;
// --target-acceptance auto is 0 (default_target_acceptance). Not validated (validate(SamplerSettings)).
SamplerSettings sampler_settings(const std::map<std::string, std::string>& options);

}  // namespace qgml::app
