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

SamplerSettings sampler_settings(const std::map<std::string, std::string>& o) {
  SamplerSettings s;
  s.kind = parse_sampler_kind(o.at("sampler"));
  s.warmup = int(strict_integer("warmup", o.at("warmup"), 0, 1000000000L));
  s.beta = strict_real("beta", o.at("beta"));
  s.leapfrog_steps = int(strict_integer("leapfrog", o.at("leapfrog"), 1, 100000));
  s.seed = std::uint64_t(strict_integer("seed", o.at("seed"), 0, 999999999999999999L));
  if (o.at("step-size") == "auto") {
    s.step_size = 0;
  } else {
    s.step_size = strict_real("step-size", o.at("step-size"));
    s.adapt = false;
  }
  if (o.at("target-acceptance") != "auto")
    s.target_acceptance = strict_real("target-acceptance", o.at("target-acceptance"));
  return s;
}

}  // namespace qgml::app
