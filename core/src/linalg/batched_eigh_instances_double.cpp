// The explicit instances of batched_eigh in double (common/explicit_instances.hpp).
#include "qgml/linalg/batched_eigh.hpp"

namespace qgml {

QGML_FOR_EACH_INSTANCE_SPACE(QGML_BATCHED_EIGH_INSTANCE, , double)

}  // namespace qgml
