// The memory budget check of a training run (train_memory_check.hpp).
#include "train/train_memory_check.hpp"

#include "qgml/common/error.hpp"

namespace qgml::app {

void check_memory(double needed, const MemoryBudget& budget, const std::string& what) {
  if (!budget.known() || needed <= budget.bytes) return;
  throw Error(
      format("%s needs about %.2f GiB of memory; this machine has %.2f GiB available (%s; %.0f bytes needed, %.0f "
             "bytes available), of which qgml uses at most %.0f %% (reduce training.batch_size, model.N or the number "
             "of points)",
             what.c_str(), needed / (1 << 30), budget.available / (1 << 30), budget.source.c_str(), needed,
             budget.available, 100 * memory_budget_share));
}

}  // namespace qgml::app
