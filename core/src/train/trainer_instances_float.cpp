// The explicit instances of Trainer::train and Trainer::run_epoch in float (common/explicit_instances.hpp).
#include "qgml/train/trainer.hpp"

namespace qgml {

QGML_FOR_EACH_INSTANCE_SPACE(QGML_TRAINER_INSTANCE, , float)

}  // namespace qgml
