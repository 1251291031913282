// The matrices and the optimizer state at the start of an epoch, kept so that an interrupted epoch can be
// abandoned (Trainer::set_stop_query): device copies, allocated once; the warm-start basis of the last
// complete epoch stays in place (warm_start_cache.hpp).
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/model/matrix_configuration.hpp"
#include "qgml/train/adam.hpp"

namespace qgml {

template <class Real, class ExecSpace>
class EpochSnapshot {
 public:
  using memory_space = typename ExecSpace::memory_space;

  bool allocated() const { return matrices_.extent(0) > 0; }
  // Buffers for D x N x N matrices.
  void allocate(int d, int n) {
    matrices_ = matrices_type(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::snapshot_matrices"), d, n, n);
    m_ = moments_type(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::snapshot_m"), d, n, n);
    v_ = moments_type(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::snapshot_v"), d, n, n);
    step_ = Kokkos::View<int, memory_space>("qgml::Trainer::snapshot_step");
  }
  // The snapshot <- the matrices and the optimizer state (device copies on exec, no fence).
  void save(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
            const HermitianAdam<Real, ExecSpace>& adam) const {
    Kokkos::deep_copy(exec, matrices_, config.matrices());
    Kokkos::deep_copy(exec, m_, adam.first_moment());
    Kokkos::deep_copy(exec, v_, adam.second_moment());
    Kokkos::deep_copy(exec, step_, adam.step_count());
  }
  // The matrices and the optimizer state <- the snapshot.
  void restore(const ExecSpace& exec, MatrixConfiguration<Real, ExecSpace>& config,
               HermitianAdam<Real, ExecSpace>& adam) const {
    Kokkos::deep_copy(exec, config.matrices(), matrices_);
    Kokkos::deep_copy(exec, adam.first_moment(), m_);
    Kokkos::deep_copy(exec, adam.second_moment(), v_);
    Kokkos::deep_copy(exec, adam.step_count(), step_);
    config.update_square_sum(exec);
    qgml::fence(exec, "qgml::Trainer: state of the last complete epoch restored");
  }

 private:
  using matrices_type = typename MatrixConfiguration<Real, ExecSpace>::matrices_type;
  using moments_type = typename HermitianAdam<Real, ExecSpace>::moments_type;
  matrices_type matrices_;
  moments_type m_, v_;
  Kokkos::View<int, memory_space> step_;
};

}  // namespace qgml
