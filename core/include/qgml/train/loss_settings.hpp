// Settings of the training loss (docs/math.md 3, 4.7, 4.8) shared by the gradient engine and the trainer.
#pragma once

#include <string>

namespace qgml {

// Optional commutator penalty lambda * sum_{i<j} ||[A_i, A_j]||_F (P1) or ||.||_F^2 (P2), docs/math.md 4.8.
enum class PenaltyKind { none, frobenius, frobenius_squared };

// What the gradient does at points whose ground state is (nearly) degenerate (docs/math.md 4.7):
//  regularize: every 1/(E_n - E_0) in the reduced resolvent becomes g / (g^2 + eta^2) with
//              eta = degeneracy_eta * max(E_{N-1} - E_0, 1) (only near-zero gaps are affected);
//  skip:       points with E_1 - E_0 <= degeneracy_tolerance * max(E_{N-1} - E_0, 1) contribute no
//              gradient.
// Either way, points under the tolerance are counted per epoch. Excited-state degeneracy is harmless
// for both and never produces NaN.
enum class DegeneracyPolicy { regularize, skip };

struct LossSettings {
  double w = 0.5;  // weight of the quantum fluctuation sigma^2 (training.w)
  PenaltyKind penalty = PenaltyKind::none;
  double penalty_weight = 0.0;  // lambda
  DegeneracyPolicy degeneracy = DegeneracyPolicy::regularize;
  double degeneracy_eta = -1;        // relative regulariser; < 0: 1e-8 (double) or 1e-4 (float)
  double degeneracy_tolerance = -1;  // relative gap counted as degenerate; < 0: same default as eta
};

// Entries of LossGradient::sums() (double, on the device).
enum LossSum : int {
  loss_total = 0,          // sum_t (d^2 + w sigma^2); supervised: sum_t (l_t + lambda (d^2 + w sigma^2))
  loss_reconstruction,     // sum_t d^2
  loss_fluctuation,        // sum_t sigma^2
  loss_energy,             // sum_t E_0
  loss_degenerate_points,  // number of points with a (nearly) degenerate ground state
  loss_nonfinite_points,   // points whose loss terms are not finite
  loss_eigh_failures,      // points whose eigensolve did not succeed
  loss_supervised,         // sum_t l(y_hat_t, y_t) (supervised training, docs/supervised.md; else 0)
  loss_penalty,            // lambda * P (set by add_penalty; not part of loss_total)
  loss_sum_count
};

PenaltyKind parse_penalty_kind(const std::string& s);
std::string to_string(PenaltyKind k);
DegeneracyPolicy parse_degeneracy_policy(const std::string& s);
std::string to_string(DegeneracyPolicy p);

}  // namespace qgml
