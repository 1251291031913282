// The options of qgml sample (sample_options.hpp).
#include "sample/sample_options.hpp"

#include "qgml/common/error.hpp"
#include "qgml/io/parse_number.hpp"

namespace qgml::app {

const std::map<std::string, std::string>& sample_defaults() {
  static const std::map<std::string, std::string> d{
      {"chains", "1000"}, {"steps", "1000"}, {"warmup", "500"},     {"thin", "auto"},   {"sampler", "mala"},
      {"beta", "1"},      {"init", "auto"},  {"step-size", "auto"}, {"leapfrog", "10"}, {"target-acceptance", "auto"},
      {"seed", "1"},      {"out", ""}};
  return d;
}

long strict_integer(const std::string& key, const std::string& text, long lo, long hi) {
  long long v = 0;
  if (!parse_integer(text, v) || v < lo || v > hi)
    throw Error("--" + key + " = '" + text + "': expected an integer in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  return long(v);
}

double strict_real(const std::string& key, const std::string& text) {
  double v = 0;
  if (!parse_real(text, v)) throw Error("--" + key + " = '" + text + "': expected a number");
  return v;
}

}  // namespace qgml::app
