// Intrinsic dimension of the benchmark manifolds (manifolds.hpp, datasets.hpp) estimated by QGML:
// train a QR-initialised configuration (N = 8 for D <= 5, N = 16 for D >= 11; w = 0.2, lr 0.01, batch 500,
// T = 2000, 200 epochs, noise 0), compute the Eq. 7 metric on the training points, estimate the
// dimension per point with the ratio rule (docs/math.md 6.1) and summarise (mode, median, mean, fraction at
// the true dimension). Data whose scale is large (Swiss roll, spiral, line: coordinates up to ~10-20) are
// standardised first: the mean is subtracted and all coordinates divided by one overall standard
// deviation (an isotropic rescaling, so the geometry is unchanged). Writes
//   manifold_dimensions.csv   one row per manifold (also the estimate with a noise floor of 1 % of e_0)
//   manifold_spectra.csv      mean (and 10/50/90 % quantiles of) each sorted metric eigenvalue per manifold
// into the output directory (default paper-output/manifold_dimensions).
//
// usage: qgml_example_manifold_dimensions [output-dir] [--epochs E] [--w W] [--N N] [--noise S] [--only NAME]
//   (defaults: 200 epochs, w = 0.2, N = 8 or 16 by D, noise 0, all manifolds; --only keeps the
//   manifolds whose name contains NAME; the options are for sensitivity studies, see README.md)
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>

#include "paper_common.hpp"

namespace {

struct Manifold {
  std::string name;
  int true_dimension;
  bool standardize;
  std::function<paper::Points(const paper::Exec&, int, std::uint64_t)> generate;
};

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * (v.size() - 1);
  const std::size_t lo = std::size_t(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - lo) * (v[hi] - v[lo]);
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    using paper::Real;
    const paper::Exec exec;
    int epochs = 200, n_override = 0;
    double w = 0.2, noise = 0.0;
    std::string dir_arg, only;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      const bool has_value = i + 1 < argc;
      if (a == "--epochs" && has_value)
        epochs = std::atoi(argv[++i]);
      else if (a == "--w" && has_value)
        w = std::atof(argv[++i]);
      else if (a == "--N" && has_value)
        n_override = std::atoi(argv[++i]);
      else if (a == "--noise" && has_value)
        noise = std::atof(argv[++i]);
      else if (a == "--only" && has_value)
        only = argv[++i];
      else if (dir_arg.empty() && a.rfind("--", 0) != 0)
        dir_arg = a;
      else {
        std::cerr << "usage: " << argv[0] << " [output-dir] [--epochs E] [--w W] [--N N] [--noise S] [--only NAME]\n";
        return 2;
      }
    }
    char* dir_argv[] = {argv[0], dir_arg.data()};
    const std::string dir = paper::output_dir(dir_arg.empty() ? 1 : 2, dir_argv, "manifold_dimensions");
    const int T = 2000;
    const std::uint64_t seed = 42;
    const double floor_fraction = 0.01;
    const std::vector<Manifold> manifolds = {
        {"sphere10 (M1)", 10, false,
         [=](const paper::Exec& e, int t, std::uint64_t s) {
           return qgml::benchmark_sphere10_points<Real>(e, t, noise, s);
         }},
        {"affine3 (M2)", 3, false,
         [=](const paper::Exec& e, int t, std::uint64_t s) { return qgml::affine_points<Real>(e, t, noise, s); }},
        {"helix (M5)", 1, false,
         [=](const paper::Exec& e, int t, std::uint64_t s) { return qgml::helix_points<Real>(e, t, noise, s); }},
        {"swiss roll (M7)", 2, true,
         [=](const paper::Exec& e, int t, std::uint64_t s) { return qgml::swiss_roll_points<Real>(e, t, noise, s); }},
        {"cube17 (M10b)", 17, false,
         [=](const paper::Exec& e, int t, std::uint64_t s) {
           return qgml::hypercube_points<Real>(e, t, 17, 18, noise, s);
         }},
        {"mobius (M11)", 2, false,
         [=](const paper::Exec& e, int t, std::uint64_t s) { return qgml::mobius_points<Real>(e, t, noise, s); }},
        {"curve13 (M13)", 1, false,
         [=](const paper::Exec& e, int t, std::uint64_t s) { return qgml::curve13_points<Real>(e, t, noise, s); }},
        {"circle", 1, false,
         [=](const paper::Exec& e, int t, std::uint64_t s) { return qgml::circle_points<Real>(e, t, 1.0, noise, s); }},
        {"sphere S2", 2, false,
         [=](const paper::Exec& e, int t, std::uint64_t s) { return qgml::sphere_points<Real>(e, t, 3, noise, s); }},
        {"spiral", 1, true,
         [=](const paper::Exec& e, int t, std::uint64_t s) { return qgml::spiral_points<Real>(e, t, noise, s); }},
        {"line", 1, true,
         [=](const paper::Exec& e, int t, std::uint64_t s) { return qgml::line_points<Real>(e, t, noise, s); }},
    };

    Kokkos::Timer all;
    std::string table =
        "name,ambient_dimension,true_dimension,N,w,epochs,noise,standardised,scale,final_loss,mode,median,mean,"
        "fraction_true,histogram,floor_mode,floor_median,floor_mean,floor_fraction_true,floor_histogram,seconds\n";
    std::string spectra = "name,index,mean,q10,median,q90\n";
    for (const auto& m : manifolds) {
      if (!only.empty() && m.name.find(only) == std::string::npos) continue;
      Kokkos::Timer timer;
      paper::Points data = m.generate(exec, T, seed);
      double scale = 1.0;
      if (m.standardize) data = paper::standardize(exec, data, &scale);
      const int D = int(data.extent(1));
      paper::RunSettings s;
      s.name = m.name;
      s.N = n_override > 0 ? n_override : (D <= 5 ? 8 : 16);
      s.w = w;
      s.learning_rate = 0.01;
      s.batch = 500;
      s.epochs = epochs;
      const paper::Result r = paper::train_and_analyse(exec, data, s);
      const double seconds = timer.seconds();
      const auto& sum = r.quantum.summary;
      const auto frac = sum.fraction();
      std::string hist;
      for (std::size_t d = 0; d < sum.histogram.size(); ++d) hist += (d ? ";" : "") + std::to_string(sum.histogram[d]);
      // The largest-gap rule (first_gap_exponent = 1) with a noise floor of 1 % of e_0: eigenvalues below
      // it are not directions, so a ratio between two near-zero normal-direction eigenvalues cannot win.
      std::vector<long> floor_histogram(D + 1, 0);
      for (int t = 0; t < r.T; ++t)
        if (r.quantum.dimension[t] >= 0)
          ++floor_histogram[qgml::estimate_dimension_from_descending<double>(&r.quantum.eigenvalues[std::size_t(t) * D],
                                                                             D, 2.0, floor_fraction, 1.0)];
      const qgml::DimensionSummary floor_sum = qgml::summarize_dimensions(floor_histogram);
      std::string floor_hist;
      for (std::size_t d = 0; d < floor_histogram.size(); ++d)
        floor_hist += (d ? ";" : "") + std::to_string(floor_histogram[d]);
      table += m.name + "," + std::to_string(D) + "," + std::to_string(m.true_dimension) + "," + std::to_string(s.N) +
               "," + paper::number(s.w) + "," + std::to_string(s.epochs) + "," + paper::number(noise) + "," +
               (m.standardize ? "yes" : "no") + "," + paper::number(scale) + "," + paper::number(r.final_epoch_loss) +
               "," + std::to_string(sum.mode) + "," + paper::number(sum.median) + "," + paper::number(sum.mean) + "," +
               paper::number(frac[m.true_dimension]) + "," + hist + "," + std::to_string(floor_sum.mode) + "," +
               paper::number(floor_sum.median) + "," + paper::number(floor_sum.mean) + "," +
               paper::number(floor_sum.fraction()[m.true_dimension]) + "," + floor_hist + "," + paper::number(seconds) +
               "\n";
      for (int i = 0; i < D; ++i) {
        std::vector<double> col(r.T);
        for (int t = 0; t < r.T; ++t) col[t] = r.quantum.eigenvalues[std::size_t(t) * D + i];
        spectra += m.name + "," + std::to_string(i) + "," + paper::number(r.quantum.mean_eigenvalues[i]) + "," +
                   paper::number(quantile(col, 0.1)) + "," + paper::number(quantile(col, 0.5)) + "," +
                   paper::number(quantile(col, 0.9)) + "\n";
      }
      std::cout.precision(4);
      std::cout << m.name << ": D = " << D << ", true d = " << m.true_dimension << ", N = " << s.N
                << (m.standardize ? ", standardised (scale " + paper::number(scale) + ")" : "") << "\n";
      paper::print_summary(r);
      std::cout << "  estimate: mode " << sum.mode << ", median " << sum.median << ", mean " << sum.mean
                << ", fraction at the true dimension " << frac[m.true_dimension] << "; with a 1 % floor: mode "
                << floor_sum.mode << ", mean " << floor_sum.mean << ", fraction "
                << floor_sum.fraction()[m.true_dimension] << " (" << seconds << " s)\n";
      // Written after every manifold so a partial run leaves a valid table.
      qgml::write_file_atomically(paper::join_path(dir, "manifold_dimensions.csv"), table);
      qgml::write_file_atomically(paper::join_path(dir, "manifold_spectra.csv"), spectra);
    }
    std::cout << "total " << all.seconds() << " s; wrote " << dir << "\n";
  } catch (const std::exception& e) {
    std::cerr << "qgml_example_manifold_dimensions: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
