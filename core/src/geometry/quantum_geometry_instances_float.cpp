// The explicit instances of QuantumGeometry::compute and TangentSpreadCheck::apply in float
// (common/explicit_instances.hpp).
#include "qgml/geometry/quantum_geometry.hpp"

namespace qgml {

QGML_FOR_EACH_INSTANCE_SPACE(QGML_QUANTUM_GEOMETRY_INSTANCE, , float)
QGML_FOR_EACH_INSTANCE_SPACE(QGML_TANGENT_SPREAD_INSTANCE, , float)

}  // namespace qgml
