// Which of LossGradient's automatic path choices the TrainingSettings keep (plan/kernel_rules.hpp decides
// what each choice runs).
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/train/training_settings.hpp"

namespace qgml::detail {

// The LossGradient settings that TrainingSettings select: ground_state_path, mixed_precision_reduction and
// wide_packs each keep the engine's automatic choice or turn it off. The Trainer sets them on its engine;
// path_choice tells what they run at size n (qgml train prints it before training).
template <class Engine>
struct EnginePathSettings {
  typename Engine::SpectralPath spectral;
  typename Engine::ReductionPrecision reduction;
  typename Engine::PackWidth width;

  explicit EnginePathSettings(const TrainingSettings& s)
      : spectral(s.ground_state_path ? Engine::SpectralPath::automatic : Engine::SpectralPath::full_spectrum),
        reduction(s.mixed_precision_reduction ? Engine::ReductionPrecision::automatic
                                              : Engine::ReductionPrecision::full),
        width(s.wide_packs ? Engine::PackWidth::automatic : Engine::PackWidth::narrow) {}
  typename Engine::PathChoice path_choice(int n) const { return Engine::path_choice(n, spectral, reduction, width); }
};

}  // namespace qgml::detail
