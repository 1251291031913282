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

#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

struct Recorder {
  int allocations = 0;
  int deep_copies = 0;
  std::set<std::string> allocation_labels, kernel_labels, region_labels;
  void reset() { *this = Recorder{}; }
};
Recorder recorder;

void on_allocate(Kokkos::Profiling::SpaceHandle, const char* label, const void*, std::uint64_t) {
  ++recorder.allocations;
  recorder.allocation_labels.insert(label);
}
void on_deep_copy(Kokkos::Profiling::SpaceHandle, const char*, const void*, Kokkos::Profiling::SpaceHandle, const char*,
                  const void*, std::uint64_t) {
  ++recorder.deep_copies;
}
void on_kernel(const char* name, std::uint32_t, std::uint64_t* id) {
  recorder.kernel_labels.insert(name);
  *id = 0;
}
void on_region(const char* name) { recorder.region_labels.insert(name); }

// Installs the callbacks for the lifetime of the object.
struct ScopedCallbacks {
  ScopedCallbacks() {
    namespace T = Kokkos::Tools::Experimental;
    T::set_allocate_data_callback(on_allocate);
    T::set_begin_deep_copy_callback(on_deep_copy);
    T::set_begin_parallel_for_callback(on_kernel);
    T::set_begin_parallel_reduce_callback(on_kernel);
    T::set_begin_parallel_scan_callback(on_kernel);
    T::set_push_region_callback(on_region);
  }
  ~ScopedCallbacks() {
    namespace T = Kokkos::Tools::Experimental;
    T::set_allocate_data_callback(nullptr);
    T::set_begin_deep_copy_callback(nullptr);
    T::set_begin_parallel_for_callback(nullptr);
    T::set_begin_parallel_reduce_callback(nullptr);
    T::set_begin_parallel_scan_callback(nullptr);
    T::set_push_region_callback(nullptr);
  }
};

bool has_prefix(const std::string& s) { return s.rfind("qgml::", 0) == 0; }

}  // namespace

TEMPLATE_TEST_CASE("steady-state epochs allocate nothing and copy to the host once", "[training][residency]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  ScopedCallbacks callbacks;
  recorder.reset();
  auto data = sphere_points<Real>(exec, 1000, 3, 0.1, 5);
  auto config = qr_configuration<Real>(3, 4, 1, exec);
  TrainingSettings s;
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
    CHECK(has_prefix(label));
  }
  for (const auto& label : recorder.region_labels) {
    INFO("region label " << label);
    CHECK(has_prefix(label));
  }
  // On CPUs the eigensolve runs inside the fused loss-gradient kernel (loss_gradient_packed.hpp).
  CHECK(recorder.region_labels.count(trainer.engine().fused() ? "qgml::fused_loss_gradient" : "qgml::eigensolve") == 1);
  CHECK(recorder.region_labels.count("qgml::reduction") == 1);
  CHECK(recorder.region_labels.count("qgml::Trainer::optimizer_step") == 1);
}
