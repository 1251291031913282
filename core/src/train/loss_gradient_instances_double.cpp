// The explicit instances of LossGradient::compute_impl in double (common/explicit_instances.hpp).
#include "qgml/train/loss_gradient.hpp"

namespace qgml {

QGML_FOR_EACH_INSTANCE_SPACE(QGML_LOSS_GRADIENT_INSTANCE, , double)

}  // namespace qgml
