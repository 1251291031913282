// Settings of the samplers of p(x) ~ exp(-beta E_0(x)) (sample/chain_sampler.hpp), with the automatic
// choices resolved in one place so that the program can print them.
#pragma once

#include <cstdint>
#include <string>

namespace qgml {

enum class SamplerKind { ula, mala, hmc };

SamplerKind parse_sampler_kind(const std::string& s);
std::string to_string(SamplerKind k);

struct SamplerSettings {
  SamplerKind kind = SamplerKind::mala;
  double beta = 1;               // inverse temperature, > 0
  double step_size = 0;          // > 0; 0: automatic (initial_step_size, then adapted during warm-up)
  bool adapt = true;             // dual averaging of the step size during warm-up
  double target_acceptance = 0;  // in (0, 1); 0: automatic (default_target_acceptance)
  int warmup = 500;              // warm-up iterations (adaptation; not recorded)
  int leapfrog_steps = 10;       // HMC: leapfrog steps per iteration
  std::uint64_t seed = 1;
};

// Throws qgml::Error naming the setting when one is out of range.
void validate(const SamplerSettings& s);

// The starting step size: for U = beta E_0 the Hessian of E_0 is at most the identity (docs/math.md 10.1: the
// second-order term is negative), so Langevin steps are stable for eps beta < 2 and leapfrog steps for
// eps sqrt(beta) < 2; a quarter of those bounds.
double initial_step_size(const SamplerSettings& s);

// The acceptance rate the adaptation aims at: 0.574 for MALA (and for ULA, whose step is adapted on the
// Metropolis probability MALA would have; Roberts and Rosenthal 1998), 0.65 for HMC (Beskos et al. 2013).
double default_target_acceptance(SamplerKind k);

// What the settings resolve to: the step size to start from and the target.
double resolved_step_size(const SamplerSettings& s);
double resolved_target_acceptance(const SamplerSettings& s);

}  // namespace qgml
