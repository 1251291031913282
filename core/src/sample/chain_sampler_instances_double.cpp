// The explicit instances of ChainSampler::step in double (common/explicit_instances.hpp).
#include "qgml/sample/chain_sampler.hpp"

namespace qgml {

QGML_FOR_EACH_INSTANCE_SPACE(QGML_CHAIN_SAMPLER_INSTANCE, , double)

}  // namespace qgml
