// The sampler's state in a sample directory's state.npy: one float64 vector.
#pragma once

#include <string>
#include <vector>

#include "qgml/sample/chain_sampler.hpp"

namespace qgml::app {

// The state as one float64 array: iteration, the step-size slots, then per chain its D coordinates,
// its acceptance sum and its accepted count.
std::vector<double> pack_state(const ChainSamplerState& st);

// The state of `chains` chains in D = d that pack_state wrote to the file at `path`.
ChainSamplerState unpack_state(const std::string& path, int chains, int d);

}  // namespace qgml::app
