// Supplementary Figure 1 of the paper (docs/math.md A.2): the noisy circle (radius 1, noise 0.1, T = 2500),
// N = 4, D = 2, trained for w = 0, 0.2, 0.4, 0.6, 0.8, 1.0 with lr 0.01, batch 500, 200 epochs.
// w = 0 over-fits the noise, w = 0.2 denoises to a clean circle, larger w shrinks and squares the ring,
// w = 1 (the loss is then 2 E_0, i.e. 4-means for commuting matrices) collapses it to 4 clusters.
// Writes, per w, the points, reconstructions, Eq. 7 metric eigenvalues and dimension estimates, the
// history and the matrices into the output directory (default paper-output/supp_figure1).
//
// usage: qgml_example_supp_figure1 [output-dir]
#include <exception>
#include <iostream>

#include "paper_common.hpp"

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    const paper::Exec exec;
    const std::string dir = paper::output_dir(argc, argv, "supp_figure1");
    const auto data = qgml::circle_points<paper::Real>(exec, 2500, 1.0, 0.1, 42);
    std::vector<paper::Result> runs;
    for (const double w : {0.0, 0.2, 0.4, 0.6, 0.8, 1.0}) {
      paper::RunSettings s;
      s.name = "w" + paper::number(w);
      s.N = 4;
      s.w = w;
      s.learning_rate = 0.01;
      s.batch = 500;
      s.epochs = 200;
      runs.push_back(paper::train_and_analyse(exec, data, s));
      paper::write_run(dir, runs.back());
      paper::print_summary(runs.back());
    }
    paper::write_summary_csv(dir, runs);
    std::cout << "wrote " << dir << "\n";
  } catch (const std::exception& e) {
    std::cerr << "qgml_example_supp_figure1: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
