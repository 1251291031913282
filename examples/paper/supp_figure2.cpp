// Supplementary Figure 2 of the paper (docs/math.md A.3): the Swiss roll (raw, unscaled, noise 0, T = 2500),
// D = 3, N = 3 versus N = 4, w = 0, lr 0.005, batch 500, 400 epochs. N = 3 shrinks the roll but keeps a
// clean gap after e1 (d = 2); N = 4 reconstructs better but lifts e2 (a less clean gap), and the
// covariance metric of the N = 4 model has no usable gap. Writes, per N, the points, reconstructions,
// Eq. 7 and covariance metric eigenvalues with dimension estimates, the history and the matrices into
// the output directory (default paper-output/supp_figure2).
//
// usage: qgml_example_supp_figure2 [output-dir]
#include <exception>
#include <iostream>

#include "paper_common.hpp"

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    const paper::Exec exec;
    const std::string dir = paper::output_dir(argc, argv, "supp_figure2");
    const auto data = qgml::swiss_roll_points<paper::Real>(exec, 2500, 0.0, 42);
    std::vector<paper::Result> runs;
    for (const int n : {3, 4}) {
      paper::RunSettings s;
      s.name = "N" + std::to_string(n);
      s.N = n;
      s.w = 0.0;
      s.learning_rate = 0.005;
      s.batch = 500;
      s.epochs = 400;
      s.covariance = true;
      runs.push_back(paper::train_and_analyse(exec, data, s));
      paper::write_run(dir, runs.back());
      paper::print_summary(runs.back());
    }
    paper::write_summary_csv(dir, runs);
    std::cout << "wrote " << dir << "\n";
  } catch (const std::exception& e) {
    std::cerr << "qgml_example_supp_figure2: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
