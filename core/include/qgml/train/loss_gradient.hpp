// Loss and exact analytic gradient over a batch of points (docs/math.md 3, 4.4, 4.5, 4.7), on the device.
//
// Per point x, with psi = psi_0, r = xbar - x, y_k = A_k psi, b_l = y_l - x_l psi:
//   s   = sum_k r_k y_k,   phi = R s,  R = sum_{n>=1} |n><n| f(E_n - E_0),
//   f(g) = g / (g^2 + eta^2) (regularised 1/g, docs/math.md 4.7),   c_l = (A_l - x_l) phi,
//   grad_{A_l} [d^2 + w sigma^2] = M_l + M_l^H,  M_l = |a_l><psi| + |e_l><phi|,
//   a_l = w b_l - (1 - w) c_l + (1 - w) r_l psi,   e_l = -(1 - w) b_l.
// The batch gradient G_l = sum_t weight_t (M_l(t) + M_l(t)^H) is a product of N x 2T and 2T x N
// matrices, U_l W^H + (U_l W^H)^H, with the columns [a_l(t) | e_l(t)] and [psi(t) | phi(t)], stored
// as rows of U (2 T x D N) and W (2 T x N): one GEMM Y = W^H U (gradient_product.hpp).
// Every sum over points runs in a fixed order, so results do not depend on the thread count.
//
// Three implementations of compute() (LossKernel, loss_kernel.hpp; set_kernel): the fused host path,
// one kernel per chunk of SIMD packs (loss_gradient_packed.hpp) that keeps neither H, the spectrum nor
// U, W, and from N = 5 on solves only for psi_0 and phi (set_spectral_path); the team path, one team
// per point on the ground-state path (loss_gradient_team.hpp), the GPU kernel; the separate batch
// kernels, build H, batched_eigh, per-point terms into U and W, the GEMM (the only one with warm
// starts). All give the same results to rounding (tests/train/test_loss_gradient.cpp).
//
// Supervised training (docs/supervised.md) adds C target operators B_c and targets per point: with
// y_hat_c = <psi|B_c|psi>, g_c = dl/dy_hat_c (train/supervised_loss.hpp, point_loss) and the unsupervised
// loss weighted by lambda, the same formulas hold with
//   s = lambda (1 - w) sum_k r_k y_k + sum_c (g_c/2) B_c psi,
//   a_l = lambda w b_l + lambda (1 - w) r_l psi - c_l,  e_l = -b_l,  and the blocks of B_c: a_c = (g_c/2) psi,
//   e_c = 0,
// so B_c is block D + c of U (D + C blocks) and one resolvent application serves every term
// (compute_supervised; every kernel, supervised_inputs.hpp; sections 5 and 11).
#pragma once

#include <Kokkos_Core.hpp>

#include <string>

#include "qgml/common/explicit_instances.hpp"
#include "qgml/common/line_aligned_scratch.hpp"
#include "qgml/ground_state/degeneracy.hpp"
#include "qgml/ground_state/ground_state_terms.hpp"
#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/model/hamiltonian.hpp"
#include "qgml/model/matrix_configuration.hpp"
#include "qgml/train/commutator_penalty.hpp"
#include "qgml/train/fused_chunk_reduction.hpp"
#include "qgml/train/loss_gradient_launchers.hpp"
#include "qgml/train/loss_gradient_packed.hpp"
#include "qgml/train/loss_gradient_separate.hpp"
#include "qgml/train/loss_gradient_team.hpp"
#include "qgml/train/loss_gradient_views.hpp"
#include "qgml/train/loss_kernel.hpp"
#include "qgml/train/loss_settings.hpp"
#include "qgml/train/loss_term_sums.hpp"
#include "qgml/train/supervised_inputs.hpp"
#include "qgml/train/supervised_loss.hpp"

namespace qgml {

template <class Real, class ExecSpace>
class LossGradient {
 public:
  using memory_space = typename ExecSpace::memory_space;
  using complex_type = complex_t<Real>;
  using sums_type = Kokkos::View<double*, memory_space>;

  LossGradient() = default;
  // kernel: the implementation compute() runs (LossKernel, resolved per call by kernel()). Only the
  // buffers of the kernel that default options resolve to are allocated; another one's (the separate
  // kernels' H, V and spectrum, ~2 N^2 complex numbers per point; U and W, (D + C) N complex numbers
  // per point and side) when a compute() first needs them.
  // target_operators = C >= 1: supervised training (compute_supervised), whose gradient has D + C
  // matrices, the last C with respect to the target operators B_1..B_C.
  LossGradient(int d, int n, int max_batch, LossKernel kernel = LossKernel::automatic, int target_operators = 0)
      : d_(d),
        n_(n),
        max_batch_(max_batch),
        targets_(target_operators),
        info_("qgml::LossGradient::info", max_batch),
        xbar_("qgml::LossGradient::xbar", max_batch, d),
        terms_("qgml::LossGradient::terms", max_batch, int(loss_penalty)),
        term_partials_(Kokkos::ViewAllocateWithoutInitializing("qgml::LossGradient::term_partials"),
                       detail::term_sum_chunks(max_batch), int(loss_penalty)),
        y_(Kokkos::ViewAllocateWithoutInitializing("qgml::LossGradient::Y"), n, (d + target_operators) * n),
        g_("qgml::LossGradient::gradient", d + target_operators, n, n),
        sums_("qgml::LossGradient::sums", int(loss_sum_count)),
        penalty_(d + target_operators, n),
        kernel_(kernel) {
    QGML_REQUIRE(max_batch >= 1, "qgml::LossGradient: max_batch must be >= 1");
    QGML_REQUIRE(target_operators >= 0,
                 "qgml::LossGradient: target_operators must be >= 0, got " + std::to_string(target_operators));
    if (targets_ > 0) y_hat_ = RealMatrix<Real, memory_space>("qgml::LossGradient::y_hat", max_batch, targets_);
    allocate_for(this->kernel());
    if constexpr (is_host_space_v<ExecSpace>) {
      const int blocks = detail::packed_gradient_blocks(d, target_operators);
      partials_ = detail::PackedGradientPartials<Real, memory_space>(
          Kokkos::ViewAllocateWithoutInitializing("qgml::LossGradient::partials"),
          detail::packed_gradient_max_chunks<Real>(n, blocks), 2, blocks * n,
          detail::packed_gradient_row(n, linalg::packed_eigh_width<Real>));
    }
  }

  // The requested implementation (automatic: see resolve_loss_kernel).
  void set_kernel(LossKernel kernel) {
    (void)resolve_loss_kernel<ExecSpace>(kernel, n_);  // rejects fused_host on devices
    kernel_ = kernel;
    update_mixed_buffers(this->kernel());
  }
  LossKernel requested_kernel() const { return kernel_; }
  // The implementation compute() runs with these eigensolver options.
  LossKernel kernel(const EighOptions& eigh = {}) const {
    return resolve_loss_kernel<ExecSpace>(kernel_, n_, eigh.variant, eigh.warm_start);
  }
  // Whether compute() with these options runs the fused host path.
  bool fused(const EighOptions& eigh = {}) const { return kernel(eigh) == LossKernel::fused_host; }
  // How the team path lays points on teams (TeamShape; automatic: one thread per point on host spaces,
  // several points per team on devices, linalg/team_shape.hpp).
  void set_team_shape(const TeamShape& shape) { team_shape_ = shape; }
  const TeamShape& team_shape() const { return team_shape_; }
  // The fused path's choices (plan::fused_path, plan/kernel_rules.hpp): its spectral work (SpectralPath:
  // by default only what the gradient needs from N >= ground_state_min_n, psi_0 and phi = R s by solves
  // with the tridiagonal T, loss_gradient_packed.hpp; the whole eigendecomposition below), its Householder
  // reduction in single precision with psi_0, E_0 and phi refined in double (ReductionPrecision; by
  // default in double from N >= mixed_precision_min_n, ground_state/ground_state_mixed.hpp) and its pack width
  // (PackWidth: narrow, one 64-byte vector of points; wide, two, in double only and not with the mixed
  // precision, which pairs narrow packs itself; by default wide on builds for 512-bit vectors). The team
  // path always takes the ground-state path.
  using SpectralPath = FusedSpectralPath;
  using ReductionPrecision = FusedReduction;
  using PackWidth = FusedPackWidth;
  static constexpr int ground_state_min_n = fused_ground_state_min_n;
  static constexpr int mixed_precision_min_n = fused_mixed_precision_min_n;
  static constexpr bool wide_packs_by_default = qgml::wide_packs_by_default;
  void set_spectral_path(SpectralPath path) {
    spectral_path_ = path;
    update_mixed_buffers(kernel());
  }
  bool ground_state_path() const {
    return path_choice(n_, spectral_path_, reduction_precision_, pack_width_).ground_state;
  }
  void set_reduction_precision(ReductionPrecision precision) {
    reduction_precision_ = precision;
    update_mixed_buffers(kernel());
  }
  bool mixed_precision_path() const {
    return path_choice(n_, spectral_path_, reduction_precision_, pack_width_).mixed_precision;
  }
  void set_pack_width(PackWidth width) { pack_width_ = width; }
  bool wide_pack_path() const { return path_choice(n_, spectral_path_, reduction_precision_, pack_width_).wide_packs; }
  // What an engine of size n with these settings runs (ground_state_path, mixed_precision_path,
  // wide_pack_path), for callers that report the choices before an engine exists.
  using PathChoice = plan::FusedPath;
  static PathChoice path_choice(int n, SpectralPath spectral, ReductionPrecision reduction, PackWidth width) {
    return plan::fused_path(precision_of<Real>, n, spectral, reduction, width);
  }
  // Points per pack of the fused path.
  int pack_lanes() const {
    return wide_pack_path() ? detail::packed_wide_width<Real> : linalg::packed_eigh_width<Real>;
  }
  static_assert(plan::pack_lanes(precision_of<Real>, false) == linalg::packed_eigh_width<Real> &&
                    plan::pack_lanes(precision_of<Real>, true) == detail::packed_wide_width<Real>,
                "the kernel plan's pack widths are the fused kernel's");
  // The batch buffers of `kernel`; compute() calls it when they are needed and missing.
  void allocate_for(LossKernel kernel) {
    const int n = n_, max_batch = max_batch_;
    update_mixed_buffers(kernel);
    if (kernel == LossKernel::fused_host) return;
    const int blocks = d_ + targets_;
    if (u_.extent(0) == 0) {
      u_ = ComplexMatrix<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::LossGradient::U"),
                                             2 * max_batch, blocks * n);
      wv_ = ComplexMatrix<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::LossGradient::W"),
                                              2 * max_batch, n);
#if defined(QGML_HAVE_KOKKOSKERNELS)
      constexpr bool gemm_always = is_host_space_v<ExecSpace>;
#else
      constexpr bool gemm_always = false;
#endif
      if (!gemm_always)
        product_partials_ =
            ProductPartials(Kokkos::ViewAllocateWithoutInitializing("qgml::LossGradient::product_partials"),
                            detail::gradient_max_chunks<Real>(n, blocks, 2 * max_batch), n, blocks * n);
    }
    if (kernel == LossKernel::separate && h_.extent(0) == 0) {
      h_ = MatrixStack<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::LossGradient::H"), max_batch,
                                           n, n);
      v_ = MatrixStack<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::LossGradient::V"), max_batch,
                                           n, n);
      w_ = RealMatrix<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::LossGradient::w"), max_batch,
                                          n);
    }
  }

  int max_batch() const { return max_batch_; }

  // Loss terms and gradient of the points (count = points.extent(0) <= max_batch). The gradient of each
  // point is weighted by `weight` (1 / count for a batch mean); sums() are plain sums over the points.
  // With accumulate, adds to the previous gradient and sums. Asynchronous on exec. With
  // eigh.warm_start, eigenvectors() must hold a starting basis for each point (see batched_eigh.hpp);
  // `sweeps` (optional, >= count ints) receives the Jacobi sweeps per point (0 for cold solves). Whether
  // it is passed does not change the path: fused(eigh) alone decides.
  template <class PointsView>
  void compute(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config, const PointsView& points,
               const LossSettings& settings, Real weight, bool accumulate, const EighOptions& eigh = {},
               const IntVector<memory_space>& sweeps = IntVector<memory_space>()) {
    QGML_REQUIRE(targets_ == 0,
                 "qgml::LossGradient::compute: this LossGradient was made for supervised training: "
                 "call compute_supervised");
    compute_impl(exec, config, points, settings, weight, accumulate, eigh, sweeps, {});
  }

  // compute() for supervised training (docs/supervised.md; a LossGradient made with target_operators =
  // C >= 1): the features' configuration (D matrices), the target operators B (C x N x N, Hermitian), the
  // points (count x D) and their targets y (count x target_columns(loss, C): one value per output, or
  // softmax's class index). gradient() then holds D + C matrices, the last C the dL/dB_c;
  // sums(loss_total) adds the supervised loss to lambda times the unsupervised one, sums(loss_supervised)
  // holds the supervised loss alone, and predictions() the y_hat(t, c) of the points. supervised.outputs
  // must be C.
  template <class PointsView, class TargetsView>
  void compute_supervised(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& features,
                          const MatrixStack<Real, memory_space>& b, const PointsView& points, const TargetsView& y,
                          const LossSettings& settings, const SupervisedSettings& supervised, Real weight,
                          bool accumulate, const EighOptions& eigh = {},
                          const IntVector<memory_space>& sweeps = IntVector<memory_space>()) {
    static_assert(TargetsView::rank == 2, "compute_supervised: the targets are count x target columns");
    QGML_REQUIRE(targets_ >= 1,
                 "qgml::LossGradient::compute_supervised: this LossGradient was made without target "
                 "operators (target_operators >= 1)");
    QGML_REQUIRE(supervised.outputs == targets_ && int(b.extent(0)) == targets_,
                 "qgml::LossGradient::compute_supervised: " + std::to_string(b.extent(0)) + " target operators and " +
                     "supervised.outputs = " + std::to_string(supervised.outputs) + ", this LossGradient has " +
                     std::to_string(targets_));
    QGML_REQUIRE(int(b.extent(1)) == n_ && int(b.extent(2)) == n_ && y.extent(0) == points.extent(0) &&
                     int(y.extent(1)) == target_columns(supervised.loss, targets_),
                 "qgml::LossGradient::compute_supervised: the B_c must be N x N and each point needs " +
                     std::to_string(target_columns(supervised.loss, targets_)) + " target value(s)");
    detail::SupervisedInputs<Real, memory_space> sup;
    sup.enabled = true;
    sup.loss = supervised.loss;
    sup.delta = Real(supervised.huber_delta);
    sup.lambda = Real(supervised.lambda);
    sup.outputs = targets_;
    sup.b = b;
    sup.y = y;
    sup.y_hat = y_hat_;
    compute_impl(exec, features, points, settings, weight, accumulate, eigh, sweeps, sup);
  }

  // compute_supervised with one target operator B (N x N) and one target per point (y: count values).
  template <class PointsView, class TargetsView>
  void compute_supervised(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& features,
                          const Matrix<Real, memory_space>& b, const PointsView& points, const TargetsView& y,
                          const LossSettings& settings, const SupervisedSettings& supervised, Real weight,
                          bool accumulate, const EighOptions& eigh = {},
                          const IntVector<memory_space>& sweeps = IntVector<memory_space>()) {
    static_assert(TargetsView::rank == 1, "compute_supervised with one B: one target per point");
    QGML_REQUIRE(b.span_is_contiguous() && y.extent(0) == points.extent(0),
                 "qgml::LossGradient::compute_supervised: B must be contiguous and there must be one target per "
                 "point");
    const MatrixStack<Real, memory_space> stack(b.data(), 1, b.extent(0), b.extent(1));
    using targets_type = Kokkos::View<const Real**, Kokkos::LayoutStride, memory_space>;
    const targets_type targets(y.data(), Kokkos::LayoutStride(y.extent(0), y.stride(0), 1, 1));
    compute_supervised(exec, features, stack, points, targets, settings, supervised, weight, accumulate, eigh, sweeps);
  }

  // y_hat(t, c) of the points of the last compute_supervised (first count rows).
  const RealMatrix<Real, memory_space>& predictions() const { return y_hat_; }
  int target_operators() const { return targets_; }

 private:
  // Out of the class (below), so that its explicit instances (end of this file) are what programs link.
  template <class PointsView>
  void compute_impl(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config, const PointsView& points,
                    const LossSettings& settings, Real weight, bool accumulate, const EighOptions& eigh,
                    const IntVector<memory_space>& sweeps, const detail::SupervisedInputs<Real, memory_space>& sup);

 public:
  // sweeps(t) = 0 for t < count: the fused and team paths solve cold (no Jacobi sweeps).
  static void zero_sweeps(const ExecSpace& exec, const IntVector<memory_space>& sweeps, int count) {
    Kokkos::parallel_for("qgml::LossGradient::zero_sweeps", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                         detail::ZeroEntries<IntVector<memory_space>>{sweeps});
  }

  // Sets the gradient and the sums to zero (a rank with no points in a distributed batch).
  void zero(const ExecSpace& exec) {
    Kokkos::parallel_for("qgml::LossGradient::zero_gradient",
                         Kokkos::RangePolicy<ExecSpace>(exec, 0, int(g_.extent(0)) * n_ * n_),
                         detail::ZeroMatrixStack<decltype(g_)>{g_, n_});
    Kokkos::parallel_for("qgml::LossGradient::zero_sums", Kokkos::RangePolicy<ExecSpace>(exec, 0, int(loss_sum_count)),
                         detail::ZeroEntries<decltype(sums_)>{sums_});
  }

  // gradient += lambda dP/dA and sums(loss_penalty) += lambda P. Supervised: config holds all D + C
  // operators A_1..A_D, B_1..B_C (the penalty has every pair of them).
  void add_penalty(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                   const LossSettings& settings) {
    if (settings.penalty == PenaltyKind::none || settings.penalty_weight == 0) return;
    QGML_REQUIRE(config.dimension() == d_ + targets_ && config.matrix_size() == n_,
                 "qgml::LossGradient::add_penalty: the configuration must hold the " + std::to_string(d_ + targets_) +
                     " operators of the gradient");
    const auto pen = Kokkos::subview(sums_, int(loss_penalty));
    penalty_.add(exec, config, settings.penalty, Real(settings.penalty_weight), g_, pen);
  }

  // D x N x N Hermitian gradient (supervised: D + C matrices), valid after compute().
  const MatrixStack<Real, memory_space>& gradient() const { return g_; }
  // loss_sum_count sums (see LossSum).
  const sums_type& sums() const { return sums_; }
  // Per-point results of the last compute(), first `count` rows valid.
  const RealMatrix<Real, memory_space>& xbar() const { return xbar_; }
  const IntVector<memory_space>& eigh_info() const { return info_; }
  // The spectrum of the last compute() on the separate kernels (!fused(options)); the fused path does not
  // store it (empty Views until the separate kernels have run).
  const RealMatrix<Real, memory_space>& eigenvalues() const { return w_; }
  const MatrixStack<Real, memory_space>& eigenvectors() const { return v_; }
  // terms(t, k) for k in {loss_total, loss_reconstruction, loss_fluctuation, loss_energy,
  // loss_degenerate_points, loss_nonfinite_points, loss_eigh_failures}, unweighted.
  const RealMatrix<Real, memory_space>& terms() const { return terms_; }

  // Bytes of device memory held, per point of max_batch and fixed.
  std::size_t bytes() const {
    return h_.span() * sizeof(complex_type) * 2 + w_.span() * sizeof(Real) + info_.span() * sizeof(int) +
           u_.span() * sizeof(complex_type) + wv_.span() * sizeof(complex_type) + xbar_.span() * sizeof(Real) +
           terms_.span() * sizeof(Real) + term_partials_.span() * sizeof(double) + y_.span() * sizeof(complex_type) +
           g_.span() * sizeof(complex_type) + partials_.span() * sizeof(complex_type) +
           product_partials_.span() * sizeof(complex_type) + y_hat_.span() * sizeof(Real) +
           mixed_buffers_.span() * sizeof(double);
  }

 private:
  detail::LossGradientViews<Real, memory_space> views() const {
    detail::LossGradientViews<Real, memory_space> b;
    b.d = d_;
    b.n = n_;
    b.max_batch = max_batch_;
    b.targets = targets_;
    b.v = v_;
    b.u = u_;
    b.y = y_;
    b.g = g_;
    b.w = w_;
    b.xbar = xbar_;
    b.terms = terms_;
    b.info = info_;
    b.wv = wv_;
    b.sums = sums_;
    b.partials = partials_;
    b.product_partials = product_partials_;
    b.term_partials = term_partials_;
    return b;
  }
  void reduce(const ExecSpace& exec, int count, bool accumulate) {
    detail::loss_gradient_reduce(exec, views(), count, accumulate);
  }
  void reduce_terms(const ExecSpace& exec, int count, bool accumulate) {
    detail::loss_gradient_reduce_terms(exec, views(), count, accumulate);
  }

  int d_ = 0, n_ = 0, max_batch_ = 0, targets_ = 0;
  RealMatrix<Real, memory_space> y_hat_;
  MatrixStack<Real, memory_space> h_, v_;
  RealMatrix<Real, memory_space> w_;
  IntVector<memory_space> info_;
  ComplexMatrix<Real, memory_space> u_, wv_;
  RealMatrix<Real, memory_space> xbar_, terms_;
  Kokkos::View<double**, Kokkos::LayoutRight, memory_space> term_partials_;
  ComplexMatrix<Real, memory_space> y_;
  MatrixStack<Real, memory_space> g_;
  sums_type sums_;
  CommutatorPenalty<Real, ExecSpace> penalty_;
  detail::PackedGradientPartials<Real, memory_space> partials_;  // fused host path: partial sums of X and M
  using ProductPartials = Kokkos::View<complex_type***, Kokkos::LayoutRight, memory_space>;
  ProductPartials product_partials_;  // gradient_product without GEMM: chunk x N x D N partial sums of Y
  LossKernel kernel_ = LossKernel::automatic;
  TeamShape team_shape_;
  SpectralPath spectral_path_ = SpectralPath::automatic;
  ReductionPrecision reduction_precision_ = ReductionPrecision::automatic;
  PackWidth pack_width_ = PackWidth::automatic;
  Kokkos::View<double**, Kokkos::LayoutRight, memory_space> mixed_buffers_;  // fused path, mixed precision

  // The mixed-precision buffers exist exactly while `kernel` is the fused host path with the mixed
  // precision on (Trainer::estimate_bytes counts them so).
  void update_mixed_buffers(LossKernel kernel) {
    if constexpr (is_host_space_v<ExecSpace>) {
      const bool needed = kernel == LossKernel::fused_host && mixed_precision_path();
      if (needed && mixed_buffers_.extent(0) == 0)
        mixed_buffers_ = Kokkos::View<double**, Kokkos::LayoutRight, memory_space>(
            Kokkos::ViewAllocateWithoutInitializing("qgml::LossGradient::mixed_buffers"),
            detail::mixed_buffer_rows(ExecSpace()), detail::mixed_buffer_row(n_, d_ + targets_));
      if (!needed) mixed_buffers_ = decltype(mixed_buffers_)();
    } else {
      (void)kernel;
    }
  }
};

template <class Real, class ExecSpace>
template <class PointsView>
void LossGradient<Real, ExecSpace>::compute_impl(const ExecSpace& exec,
                                                 const MatrixConfiguration<Real, ExecSpace>& config,
                                                 const PointsView& points, const LossSettings& settings, Real weight,
                                                 bool accumulate, const EighOptions& eigh,
                                                 const IntVector<memory_space>& sweeps,
                                                 const detail::SupervisedInputs<Real, memory_space>& sup) {
  const int count = static_cast<int>(points.extent(0));
  QGML_REQUIRE(count <= max_batch_, "qgml::LossGradient::compute: " + std::to_string(count) +
                                        " points exceed max_batch = " + std::to_string(max_batch_));
  QGML_REQUIRE(config.dimension() == d_ && config.matrix_size() == n_ && int(points.extent(1)) == d_,
               "qgml::LossGradient::compute: the configuration or the points do not match D = " + std::to_string(d_) +
                   ", N = " + std::to_string(n_));
  if (count == 0) return;
  const auto range = Kokkos::make_pair(0, count);
  const bool record_sweeps = sweeps.extent(0) >= std::size_t(count);
  const LossKernel path = kernel(eigh);
  if (path == LossKernel::fused_host) {
    if constexpr (is_host_space_v<ExecSpace>) {
      if (record_sweeps) zero_sweeps(exec, sweeps, count);
      {
        ScopedRegion region("qgml::fused_loss_gradient");
        const bool mixed = mixed_precision_path();
        update_mixed_buffers(path);
        detail::loss_gradient_fused_chunks(exec, views(), config, points, settings, weight, count, ground_state_path(),
                                           wide_pack_path(), mixed ? mixed_buffers_ : decltype(mixed_buffers_)(), sup);
      }
      ScopedRegion region("qgml::reduction");
      detail::loss_gradient_reduce_chunks(exec, views(), config.matrices(),
                                          detail::gradient_coefficients(sup, Real(settings.w)).c_coef, count,
                                          accumulate, mixed_precision_path() || wide_pack_path());
      reduce_terms(exec, count, accumulate);
    }
    return;
  }
  allocate_for(path);
  if (path == LossKernel::team) {
    if (record_sweeps) zero_sweeps(exec, sweeps, count);
    detail::loss_gradient_team(exec, views(), config, points, settings, weight, count, team_shape_, sup);
    ScopedRegion region("qgml::reduction");
    reduce(exec, count, accumulate);
    return;
  }
  const auto h = Kokkos::subview(h_, range, Kokkos::ALL, Kokkos::ALL);
  const auto v = Kokkos::subview(v_, range, Kokkos::ALL, Kokkos::ALL);
  const auto w = Kokkos::subview(w_, range, Kokkos::ALL);
  const auto info = Kokkos::subview(info_, range);
  {
    ScopedRegion region("qgml::build_hamiltonians");
    build_hamiltonians(exec, config, points, h);
  }
  {
    ScopedRegion region("qgml::eigensolve");
    if (record_sweeps)
      batched_eigh(exec, h, w, v, info, eigh, Kokkos::subview(sweeps, range));
    else
      batched_eigh(exec, h, w, v, info, eigh);
  }
  {
    ScopedRegion region("qgml::gradient");
    detail::loss_gradient_per_point(exec, views(), config, points, settings, weight, count, sup);
  }
  ScopedRegion region("qgml::reduction");
  reduce(exec, count, accumulate);
}

// Explicit instances (common/explicit_instances.hpp): the batch, its rows (with Kokkos 3 also their
// leading columns, a supervised batch's features) and the caller's host array by rows; defined in
// src/train/loss_gradient_instances_{double,float}.cpp.
#define QGML_LOSS_GRADIENT_POINTS(E, Real, Space, Points)                                                  \
  E template void LossGradient<Real, Space>::compute_impl<instances::Points<Real, Space>>(                 \
      const Space&, const MatrixConfiguration<Real, Space>&, const instances::Points<Real, Space>&,        \
      const LossSettings&, Real, bool, const EighOptions&, const IntVector<typename Space::memory_space>&, \
      const detail::SupervisedInputs<Real, typename Space::memory_space>&);
#define QGML_LOSS_GRADIENT_INSTANCE(E, Real, Space, H) \
  QGML_LOSS_GRADIENT_POINTS(E, Real, Space, Points)    \
  QGML_LOSS_GRADIENT_POINTS(E, Real, Space, PointRows) \
  H(QGML_LOSS_GRADIENT_POINTS(E, Real, Space, HostArrayRows))
QGML_FOR_EACH_INSTANCE(QGML_LOSS_GRADIENT_INSTANCE, extern)

}  // namespace qgml
