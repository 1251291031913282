// A Trainer's warm-start basis in checkpoints (checkpoint.hpp): the eigenvectors of every point gathered
// in point order from the ranks' shards (the file is that of a one-process run), and each rank's rows
// restored from it, whatever the number of ranks that wrote it.
#pragma once

#include <Kokkos_Core.hpp>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/parallel/communicator.hpp"
#include "qgml/train/warm_start_cache.hpp"

namespace qgml {

// The warm-start basis (N x N per point) of all `count` points (on rank 0; empty on the others and before
// the first epoch), gathered from the ranks' shards (comm; nullptr: one process). A collective when
// distributed.
template <class Real, class ExecSpace>
HostMatrices gather_warm_basis(const WarmStartCache<Real, ExecSpace>& warm, const ExecSpace& exec, int n,
                               ShardRange shard, std::int64_t count, Communicator* comm) {
  HostMatrices all;
  if (!warm.ready()) return all;
  const std::size_t width = 2 * std::size_t(n) * std::size_t(n);
  const auto b = Kokkos::create_mirror_view(warm.basis());
  Kokkos::deep_copy(exec, b, warm.basis());
  qgml::fence(exec, "qgml::Trainer: warm-start basis to the host");
  std::vector<double> local(std::size_t(shard.size()) * width);
  for (std::int64_t i = 0; i < shard.size(); ++i)
    for (int a = 0; a < n; ++a)
      for (int c = 0; c < n; ++c) {
        const auto z = b(i, a, c);
        const std::size_t q = std::size_t(i) * width + 2 * (std::size_t(a) * n + c);
        local[q] = double(z.real());
        local[q + 1] = double(z.imag());
      }
  const std::vector<double> rows = comm ? gather_shards_to_root(*comm, local, count, width) : std::move(local);
  if (rows.empty()) return all;
  all.D = count;
  all.N = n;
  all.values.resize(std::size_t(count) * n * n);
  for (std::size_t q = 0; q < all.values.size(); ++q)
    all.values[q] = std::complex<double>(rows[2 * q], rows[2 * q + 1]);
  return all;
}

// warm's basis <- this rank's rows [shard begin, end) of the basis of all T points.
template <class Real, class ExecSpace>
void restore_warm_basis(WarmStartCache<Real, ExecSpace>& warm, const HostMatrices& all, const ExecSpace& exec, int n,
                        ShardRange shard) {
  auto b = Kokkos::create_mirror_view(Kokkos::HostSpace(), warm.basis());
  qgml::fence(exec, "qgml::Trainer: earlier work on the warm-start basis done (the mirror may alias it)");
  for (std::int64_t i = 0; i < shard.size(); ++i)
    for (int a = 0; a < n; ++a)
      for (int c = 0; c < n; ++c) {
        const auto z = all(int(shard.begin + i), a, c);
        b(i, a, c) = complex_t<Real>(Real(z.real()), Real(z.imag()));
      }
  Kokkos::deep_copy(exec, warm.basis(), b);
  qgml::fence(exec, "qgml::Trainer: warm-start basis restored");
  warm.set_ready(true);
}

}  // namespace qgml
