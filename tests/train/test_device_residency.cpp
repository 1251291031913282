// Contracts checked through in-process Kokkos Tools callbacks: in steady-state training epochs no View
// is allocated and at most one deep copy (the epoch sums to the host) happens per epoch; every kernel,
// allocation and profiling region of qgml carries the "qgml::" prefix.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <set>
#include <string>

#include "qgml/data/datasets.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/train/trainer.hpp"

#include "kokkos_tools_recorder.hpp"
#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

// A communicator of `ranks` processes whose collectives are never called (a Trainer's constructor
// calls none): lets one process construct the trainer of rank `rank` of a data-parallel run.
class ConstructionOnlyCommunicator final : public Communicator {
 public:
  ConstructionOnlyCommunicator(int ranks, int rank) : ranks_(ranks), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return ranks_; }
  void allreduce_sum(double*, std::size_t, bool) override { unexpected(); }
  bool accepts_device_memory() const override { return true; }
  void allreduce_sum(std::int64_t*, std::size_t) override { unexpected(); }
  void allreduce_max(std::int64_t*, std::size_t) override { unexpected(); }
  std::vector<double> gather_to_root(const std::vector<double>&) override { unexpected(); }
  std::string broadcast(const std::string&, int) override { unexpected(); }
  std::string agree_on_error(const std::string&) override { unexpected(); }
  [[noreturn]] void abort(int) override { unexpected(); }

 private:
  [[noreturn]] static void unexpected() { throw Error("ConstructionOnlyCommunicator: a collective was called"); }
  int ranks_, rank_;
};

}  // namespace

TEMPLATE_TEST_CASE("steady-state epochs allocate nothing and copy to the host once", "[training][residency]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  ScopedCallbacks callbacks;
  recorder.reset();
  // Every loss-gradient kernel: the automatic one (fused on CPUs, team on GPUs), team and separate; N = 4,
  // N = configuration_gemm_min_n, where the square sum and the penalty's products go to KokkosBlas::gemm
  // (linalg/blas_gemm.hpp), and N = mixed_precision_min_n, where the fused path in double reduces in single
  // precision (ground_state/ground_state_mixed.hpp).
  for (const int n : {4, qgml::detail::configuration_gemm_min_n, LossGradient<Real, Space>::mixed_precision_min_n})
    for (const LossKernel kernel : {LossKernel::automatic, LossKernel::team, LossKernel::separate}) {
      INFO("training.kernel " << to_string(kernel) << ", N = " << n << ", products by GEMM "
                              << qgml::detail::configuration_products_use_gemm(exec, n));
      recorder.reset();
      auto data = sphere_points<Real>(exec, 1000, 3, 0.1, 5);
      auto config = qr_configuration<Real>(3, n, 1, exec);
      TrainingSettings s;
      s.kernel = kernel;
      s.epochs = 5;
      s.batch_size = 256;
      s.learning_rate = 0.01;
      s.loss.w = 0.2;
      s.loss.penalty = PenaltyKind::frobenius;
      s.loss.penalty_weight = 0.01;
      Trainer<Real, Space> trainer(config, data, s, exec);
      for (const auto& label : recorder.allocation_labels) {
        INFO("allocation label " << label);
        CHECK(has_prefix(label));
      }
      trainer.train_epoch();  // warm-up: lazily created scratch of the execution space
      recorder.reset();
      const int epochs = 3;
      for (int e = 0; e < epochs; ++e) trainer.train_epoch();
      CHECK(recorder.allocations == 0);
      CHECK(recorder.deep_copies <= epochs);
      CHECK(!recorder.kernel_labels.empty());
      for (const auto& label : recorder.kernel_labels) {
        INFO("kernel label " << label);
        CHECK(ours_or_gemm(label));
      }
      for (const auto& label : recorder.region_labels) {
        INFO("region label " << label);
        CHECK(ours_or_gemm(label));
      }
      // The eigensolve runs inside the fused (loss_gradient_packed.hpp) or team (loss_gradient_team.hpp) kernel.
      const LossKernel ran = trainer.engine().kernel();
      CHECK(ran == resolve_loss_kernel<Space>(kernel, n));
      CHECK(recorder.region_labels.count(ran == LossKernel::fused_host ? "qgml::fused_loss_gradient"
                                         : ran == LossKernel::team     ? "qgml::team_loss_gradient"
                                                                       : "qgml::eigensolve") == 1);
      CHECK(recorder.region_labels.count("qgml::reduction") == 1);
      CHECK(recorder.region_labels.count("qgml::Trainer::optimizer_step") == 1);
    }
}

// Trainer::estimate_bytes is the memory model of qgml train's pre-flight check and qgml tune: it must
// count every buffer a trainer allocates (the LossGradient's, Adam's, the batch distribution's, the
// warm-start cache's, host mirrors), and bytes() of the constructed trainer must agree.
TEMPLATE_TEST_CASE("Trainer::estimate_bytes is what a trainer allocates, and bytes() agrees", "[training][memory]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  struct Case {
    int d, n, points, batch;
    LossKernel kernel;
    bool warm, penalty;
    int ranks;
  };
  const Case cases[] = {
      {3, 4, 1, 0, LossKernel::automatic, false, false, 1},  {3, 4, 50, 16, LossKernel::automatic, false, true, 1},
      {3, 4, 50, 16, LossKernel::separate, false, true, 1},  {3, 5, 50, 0, LossKernel::automatic, true, false, 1},
      {2, 3, 7, 3, LossKernel::separate, true, true, 1},     {4, 70, 5, 2, LossKernel::automatic, false, false, 1},
      {3, 4, 50, 16, LossKernel::automatic, false, true, 3}, {3, 4, 50, 16, LossKernel::separate, true, false, 2},
      {1, 2, 9, 100, LossKernel::automatic, false, true, 2}, {3, 6, 50, 16, LossKernel::team, false, true, 1},
      {4, 70, 5, 2, LossKernel::team, false, false, 2},
  };
  for (const Case& c : cases) {
    TrainingSettings s;
    s.batch_size = c.batch;
    s.kernel = c.kernel;
    s.warm_start_eigh = c.warm;
    s.loss.penalty = c.penalty ? PenaltyKind::frobenius : PenaltyKind::none;
    s.loss.penalty_weight = 0.01;
    INFO("D = " << c.d << ", N = " << c.n << ", T = " << c.points << ", batch " << c.batch << ", kernel "
                << to_string(c.kernel) << ", warm start " << c.warm << ", " << c.ranks << " ranks");
    auto config = qr_configuration<Real>(c.d, c.n, 1, exec);
    for (int rank = 0; rank < c.ranks; ++rank) {
      const ShardRange shard = shard_range(c.points, c.ranks, rank);
      auto data = sphere_points<Real>(exec, int(shard.size()), c.d, 0.1, 5, shard.begin);
      ConstructionOnlyCommunicator comm(c.ranks, rank);
      ScopedCallbacks callbacks;
      recorder.reset();
      const Trainer<Real, Space> trainer(config, data, s, exec, comm, c.points);
      const std::uint64_t allocated = recorder.allocated_bytes;
      const std::size_t estimate = Trainer<Real, Space>::estimate_bytes(s, c.d, c.n, shard.size(), c.points, c.ranks);
      CHECK(allocated == estimate);
      CHECK(trainer.bytes() == estimate);
      if (c.ranks == 1) CHECK(Trainer<Real, Space>::estimate_bytes(s, c.d, c.n, c.points) == estimate);
      // What set_stop_query adds: the snapshot of the matrices and the optimizer state, and the
      // warm-start cache's second basis.
      recorder.reset();
      Trainer<Real, Space> stoppable(config, data, s, exec, comm, c.points);
      stoppable.set_stop_query([] { return false; });
      const std::size_t interruptible =
          Trainer<Real, Space>::estimate_bytes(s, c.d, c.n, shard.size(), c.points, c.ranks, true);
      CHECK(recorder.allocated_bytes == interruptible);
      CHECK(stoppable.bytes() == interruptible);
      CHECK(interruptible > estimate);
    }
  }
}

TEST_CASE("the batch size is training.batch_size, or T for 0 and for more than T", "[training][memory]") {
  TrainingSettings s;
  s.batch_size = 0;
  CHECK(effective_batch_size(s, 40) == 40);
  s.batch_size = 16;
  CHECK(effective_batch_size(s, 40) == 16);
  CHECK(effective_batch_size(s, 10) == 10);
  const Kokkos::DefaultExecutionSpace exec;
  auto config = qr_configuration<double>(3, 3, 1, exec);
  auto data = sphere_points<double>(exec, 10, 3, 0.1, 5);
  const Trainer<double> trainer(config, data, s, exec);
  CHECK(trainer.batch_size() == 10);
}
