// qgml eval's loss and gradient of a configuration file on a data file (evaluate_files.hpp).
#include "evaluate/evaluate_files.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <complex>
#include <sstream>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/io/atomic_file.hpp"
#include "qgml/io/configuration_io.hpp"
#include "qgml/io/data_io.hpp"
#include "qgml/io/npy.hpp"
#include "qgml/train/evaluate.hpp"

#include "common/format.hpp"
#include "common/json_file.hpp"
#include "run/run_directory.hpp"

namespace qgml::app {

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

template <class Real>
EvaluationReport evaluate_in(const EvaluationRequest& r) {
  const Exec exec;
  const HostMatrices m = load_matrices(r.matrices);
  const HostData points = read_points(r.data);
  if (points.cols != m.D)
    throw Error("the data '" + r.data + "' have D = " + std::to_string(points.cols) +
                " coordinates but the configuration '" + r.matrices + "' has D = " + std::to_string(m.D) + " matrices");
  const auto config = to_configuration<Real>(m, exec);
  const auto data = to_device_points<Real>(exec, points);
  prepare_output_directory(r.out);
  const auto e = evaluate(exec, config, data, r.loss);
  const int t = int(data.extent(0)), d = config.dimension(), n = config.matrix_size();
  if (!std::isfinite(e.loss))
    throw Error(
        format("qgml eval: the loss is not finite (%s; the eigensolve failed at %ld of %d points): the "
               "matrices or the points are likely of an extreme scale",
               std::to_string(e.loss).c_str(), long(e.eigh_failures), t));
  auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.gradient);
  auto xbar = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.xbar);
  auto sigma2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.sigma2);
  auto energy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.energy);
  const std::string& out = r.out;
  std::vector<std::complex<double>> gd(g.span());
  for (std::size_t i = 0; i < g.span(); ++i) gd[i] = {g.data()[i].real(), g.data()[i].imag()};
  write_npy(out + "/gradient.npy", NpyType::complex128, {std::size_t(d), std::size_t(n), std::size_t(n)}, gd.data());
  std::vector<double> xd(xbar.data(), xbar.data() + xbar.span()), sd(sigma2.data(), sigma2.data() + t),
      ed(energy.data(), energy.data() + t);
  write_npy(out + "/xbar.npy", NpyType::float64, {std::size_t(t), std::size_t(d)}, xd.data());
  write_npy(out + "/sigma2.npy", NpyType::float64, {std::size_t(t)}, sd.data());
  write_npy(out + "/energy.npy", NpyType::float64, {std::size_t(t)}, ed.data());
  std::ostringstream csv;
  csv.precision(17);
  for (int k = 0; k < d; ++k) csv << "xbar" << k << ",";
  csv << "sigma2,energy\n";
  for (int i = 0; i < t; ++i) {
    for (int k = 0; k < d; ++k) csv << xbar(i, k) << ",";
    csv << sigma2(i) << "," << energy(i) << "\n";
  }
  write_file_atomically(out + "/per_point.csv", csv.str());
  write_json_file(out + "/loss.json", {{"loss", e.loss},
                                       {"reconstruction", e.reconstruction},
                                       {"fluctuation", e.fluctuation},
                                       {"penalty", e.penalty},
                                       {"w", r.loss.w},
                                       {"points", t},
                                       {"degenerate_points", e.degenerate_points},
                                       {"eigh_failures", e.eigh_failures}});
  EvaluationReport report;
  report.loss = e.loss;
  report.reconstruction = e.reconstruction;
  report.fluctuation = e.fluctuation;
  report.penalty = e.penalty;
  report.points = t;
  return report;
}

}  // namespace

EvaluationReport evaluate_files(const EvaluationRequest& request) {
  return request.single_precision ? evaluate_in<float>(request) : evaluate_in<double>(request);
}

}  // namespace qgml::app
