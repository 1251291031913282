// Figure 1 of the paper (docs/math.md A.1): the fuzzy sphere, N = 3, D = 3, T = 2500 points on the unit sphere.
//   (a, b) noise 0:   w = 0.25, lr 0.01, batch 500, 100 epochs  -> the spin-1 fuzzy sphere with c = 0.8
//   (c, d) noise 0.2: w = 0.1,  lr 1e-3, batch 500, 200 epochs
// (the "best" settings of the reference's docs/figure1.md). Writes, per run, the input points, the
// reconstructions xbar, the Eq. 7 metric eigenvalues with the dimension estimate per point, the
// training history and the trained matrices into the output directory (default paper-output/figure1).
//
// usage: qgml_example_figure1 [output-dir]
#include <exception>
#include <iostream>

#include "paper_common.hpp"

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    const paper::Exec exec;
    const std::string dir = paper::output_dir(argc, argv, "figure1");
    const int T = 2500, D = 3, N = 3;
    const std::uint64_t data_seed = 42;

    std::vector<paper::Result> runs;
    {
      const auto data = qgml::sphere_points<paper::Real>(exec, T, D, 0.0, data_seed);
      paper::RunSettings s;
      s.name = "noise0";
      s.N = N;
      s.w = 0.25;
      s.learning_rate = 0.01;
      s.batch = 500;
      s.epochs = 100;
      runs.push_back(paper::train_and_analyse(exec, data, s));
    }
    {
      const auto data = qgml::sphere_points<paper::Real>(exec, T, D, 0.2, data_seed);
      paper::RunSettings s;
      s.name = "noise0.2";
      s.N = N;
      s.w = 0.1;
      s.learning_rate = 1e-3;
      s.batch = 500;
      s.epochs = 200;
      runs.push_back(paper::train_and_analyse(exec, data, s));
    }
    for (const auto& r : runs) {
      paper::write_run(dir, r);
      paper::print_summary(r);
    }
    paper::write_summary_csv(dir, runs);
    std::cout << "wrote " << dir << "\n";
  } catch (const std::exception& e) {
    std::cerr << "qgml_example_figure1: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
