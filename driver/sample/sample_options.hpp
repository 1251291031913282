// The options of qgml sample: their defaults and the checked values of integer and number options.
#pragma once

#include <map>
#include <string>

namespace qgml::app {

// The options and their defaults ("auto": chosen and printed).
const std::map<std::string, std::string>& sample_defaults();

// The value `text` of option --key: an integer in [lo, hi]; an Error naming the option otherwise.
long strict_integer(const std::string& key, const std::string& text, long lo, long hi);

// The value `text` of option --key: a number; an Error naming the option otherwise.
double strict_real(const std::string& key, const std::string& text);

}  // namespace qgml::app
