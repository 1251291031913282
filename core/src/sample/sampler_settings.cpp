#include "qgml/sample/sampler_settings.hpp"

#include <cmath>

#include "qgml/common/error.hpp"

namespace qgml {

SamplerKind parse_sampler_kind(const std::string& s) {
  if (s == "ula") return SamplerKind::ula;
  if (s == "mala") return SamplerKind::mala;
  if (s == "hmc") return SamplerKind::hmc;
  throw Error("unknown sampler '" + s + "' (expected ula, mala or hmc)");
}

std::string to_string(SamplerKind k) {
  switch (k) {
    case SamplerKind::ula:
      return "ula";
    case SamplerKind::mala:
      return "mala";
    case SamplerKind::hmc:
      return "hmc";
  }
  return "?";
}

void validate(const SamplerSettings& s) {
  if (!(s.beta > 0) || !std::isfinite(s.beta)) throw Error("beta = " + std::to_string(s.beta) + ": expected > 0");
  if (!(s.step_size >= 0) || !std::isfinite(s.step_size))
    throw Error("step size = " + std::to_string(s.step_size) + ": expected > 0 (or 0 for automatic)");
  if (!(s.target_acceptance >= 0 && s.target_acceptance < 1))
    throw Error("target acceptance = " + std::to_string(s.target_acceptance) +
                ": expected in (0, 1) (or 0 for automatic)");
  if (s.warmup < 0) throw Error("warm-up = " + std::to_string(s.warmup) + ": expected >= 0");
  if (s.leapfrog_steps < 1) throw Error("leapfrog steps = " + std::to_string(s.leapfrog_steps) + ": expected >= 1");
}

double initial_step_size(const SamplerSettings& s) {
  return s.kind == SamplerKind::hmc ? 0.5 / std::sqrt(s.beta) : 0.5 / s.beta;
}

double default_target_acceptance(SamplerKind k) { return k == SamplerKind::hmc ? 0.65 : 0.574; }

double resolved_step_size(const SamplerSettings& s) { return s.step_size > 0 ? s.step_size : initial_step_size(s); }

double resolved_target_acceptance(const SamplerSettings& s) {
  return s.target_acceptance > 0 ? s.target_acceptance : default_target_acceptance(s.kind);
}

}  // namespace qgml
