// The explicit instances of GroundStateEnergy::compute in double (common/explicit_instances.hpp).
#include "qgml/ground_state/ground_state_energy.hpp"

namespace qgml {

QGML_FOR_EACH_INSTANCE_SPACE(QGML_GROUND_STATE_ENERGY_INSTANCE, , double)

}  // namespace qgml
