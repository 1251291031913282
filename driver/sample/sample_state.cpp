// The sampler's state in state.npy (sample_state.hpp).
#include "sample/sample_state.hpp"

#include <cstddef>
#include <cstring>

#include "qgml/common/error.hpp"
#include "qgml/io/npy.hpp"

namespace qgml::app {

std::vector<double> pack_state(const ChainSamplerState& st) {
  std::vector<double> v;
  v.push_back(double(st.iteration));
  v.insert(v.end(), st.step.begin(), st.step.end());
  v.insert(v.end(), st.positions.begin(), st.positions.end());
  v.insert(v.end(), st.acceptance_sum.begin(), st.acceptance_sum.end());
  v.insert(v.end(), st.accepted.begin(), st.accepted.end());
  return v;
}

ChainSamplerState unpack_state(const std::string& path, int chains, int d) {
  const NpyArray a = read_npy(path);
  const std::size_t expected = 1 + std::size_t(step_slots) + std::size_t(chains) * (d + 2);
  if (a.type != NpyType::float64 || a.shape.size() != 1 || a.shape[0] != expected)
    throw Error("'" + path + "': expected a float64 vector of " + std::to_string(expected) + " values for " +
                std::to_string(chains) + " chains in D = " + std::to_string(d));
  std::vector<double> v(expected);
  std::memcpy(v.data(), a.bytes.data(), expected * sizeof(double));
  ChainSamplerState st;
  st.chains = chains;
  st.d = d;
  st.iteration = long(v[0]);
  if (!(v[0] >= 0) || double(st.iteration) != v[0]) throw Error("'" + path + "': the iteration is not valid");
  auto it = v.begin() + 1;
  st.step.assign(it, it + step_slots);
  it += step_slots;
  st.positions.assign(it, it + std::size_t(chains) * d);
  it += std::size_t(chains) * d;
  st.acceptance_sum.assign(it, it + chains);
  it += chains;
  st.accepted.assign(it, it + chains);
  return st;
}

}  // namespace qgml::app
