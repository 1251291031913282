// Which implementation computes the loss and gradient of a batch (LossGradient::compute). All give the
// same loss, gradient and per-point terms to rounding (tests/train/test_loss_gradient.cpp):
//  - fused_host: one kernel per chunk of SIMD packs of points (loss_gradient_packed.hpp), host spaces
//    only, 2 <= N <= fused_host_max_n (256, the packed eigensolver's limit);
//  - team: one team per point on the ground-state path (loss_gradient_team.hpp): H(x) in team scratch,
//    team Householder reduction, E_0 / E_1 / E_max by bisection, z_0 by inverse iteration, phi by the
//    reduced-resolvent solve; the batch gradient as one GEMM. Every backend; the GPU kernel;
//  - separate: batch kernels (build H, batched_eigh, per-point terms, the same GEMM); the only one
//    that takes warm-started eigensolves.
// Which one runs is plan::loss_kernel's choice (plan/kernel_rules.hpp).
#pragma once

#include "qgml/plan/kernel_rules.hpp"
