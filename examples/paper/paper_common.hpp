// Shared code of the paper-figure examples: train one matrix configuration on a data set, analyse it
// (reconstruction, Eq. 7 and covariance metric spectra, per-point dimension estimates) and write the
// results as CSV files (atomically) plus a one-line summary per run.
//
// Everything runs in double precision on Kokkos::DefaultExecutionSpace; the caller owns the
// Kokkos::ScopeGuard and passes the execution space instance.
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "qgml/data/datasets.hpp"
#include "qgml/data/manifolds.hpp"
#include "qgml/data/standardize.hpp"
#include "qgml/geometry/analyze_dimension.hpp"
#include "qgml/geometry/dimension_estimate.hpp"
#include "qgml/geometry/quantum_geometry.hpp"
#include "qgml/io/atomic_file.hpp"
#include "qgml/io/configuration_io.hpp"
#include "qgml/io/data_io.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/train/evaluate.hpp"
#include "qgml/train/trainer.hpp"
#include "qgml/train/training_settings.hpp"

namespace paper {

using Real = double;
using Exec = Kokkos::DefaultExecutionSpace;
using Points = qgml::RealMatrix<Real, Exec::memory_space>;

// The output directory: argv[1], or paper-output/<figure>; created if missing.
inline std::string output_dir(int argc, char** argv, const std::string& figure) {
  const std::string dir = argc > 1 ? std::string(argv[1]) : "paper-output/" + figure;
  std::filesystem::create_directories(dir);
  return dir;
}

// Hyper-parameters of one training run (docs/math.md 8.1-8.3: Adam, shuffled mini-batches, QR initialisation).
struct RunSettings {
  std::string name;  // file prefix
  int N = 3;
  double w = 0.0;
  double learning_rate = 0.01;
  int batch = 500;
  int epochs = 100;
  std::uint64_t init_seed = 1;     // qr_configuration seed
  std::uint64_t shuffle_seed = 7;  // batch shuffling
  bool covariance = false;         // also analyse the covariance metric (docs/math.md 5.2)
};

// Per-point spectrum of one metric: eigenvalues descending (T x D, row-major) and the ratio-rule
// dimension estimate (docs/math.md 6; -1 where the eigensolver failed).
struct Spectrum {
  int D = 0;
  std::vector<double> eigenvalues;
  std::vector<int> dimension;
  std::vector<double> mean_eigenvalues;  // per index, over the points with a valid estimate
  qgml::DimensionSummary summary;        // over the points with a valid estimate
  long failures = 0;
};

struct Result {
  RunSettings settings;
  int T = 0, D = 0;
  std::vector<qgml::EpochRecord> history;
  double final_epoch_loss = 0;  // the last epoch's mean batch loss (what the reference reports)
  double loss = 0, reconstruction = 0, fluctuation = 0;  // evaluated on all points after training
  qgml::HostData points, xbar;
  std::vector<double> sigma2;
  double mean_xbar_norm = 0, mean_point_norm = 0, mean_displacement = 0;  // means of |xbar|, |x|, |x - xbar|
  Spectrum quantum, covariance;
  qgml::HostMatrices matrices;
  double train_seconds = 0, seconds = 0;
};

// A standardised copy of the points (qgml::standardize: the mean per coordinate subtracted, all
// coordinates divided by one overall standard deviation, so the shape is unchanged); *scale_out = that
// standard deviation.
inline Points standardize(const Exec& exec, const Points& x, double* scale_out = nullptr) {
  Points y(Kokkos::ViewAllocateWithoutInitializing("qgml::paper::standardized"), x.extent(0), x.extent(1));
  Kokkos::deep_copy(exec, y, x);
  qgml::SelfCommunicator self;
  const qgml::Standardization s = qgml::standardize(exec, y, self);
  if (scale_out) *scale_out = s.scale;
  return y;
}

inline Spectrum metric_spectrum(const Exec& exec, const qgml::MatrixConfiguration<Real, Exec>& config,
                                const Points& points, qgml::MetricKind kind) {
  const int T = int(points.extent(0)), D = int(points.extent(1));
  qgml::GeometrySettings gs;
  gs.metric = kind;
  const qgml::DimensionAnalysis a = qgml::analyze_dimension(exec, config, points, gs, T);
  Spectrum s;
  s.D = D;
  s.eigenvalues = a.eigenvalues;
  s.dimension = a.dimension;
  s.summary = a.summary;
  s.failures = a.failed_points;
  s.mean_eigenvalues.assign(D, 0.0);
  for (int t = 0; t < T; ++t)
    if (s.dimension[t] >= 0)
      for (int i = 0; i < D; ++i) s.mean_eigenvalues[i] += s.eigenvalues[std::size_t(t) * D + i];
  const long valid = T - s.failures;
  for (auto& m : s.mean_eigenvalues) m = valid > 0 ? m / valid : std::nan("");
  return s;
}

// Trains a QR-initialised N x N configuration on `data` and analyses it on the same points.
inline Result train_and_analyse(const Exec& exec, const Points& data, const RunSettings& rs) {
  Kokkos::Timer total;
  Result r;
  r.settings = rs;
  r.T = int(data.extent(0));
  r.D = int(data.extent(1));
  auto config = qgml::qr_configuration<Real>(r.D, rs.N, rs.init_seed, exec);
  qgml::TrainingSettings ts;
  ts.epochs = rs.epochs;
  ts.batch_size = rs.batch;
  ts.learning_rate = rs.learning_rate;
  ts.loss.w = rs.w;
  ts.seed = rs.shuffle_seed;
  ts.early_stop_tolerance = 0;  // a fixed number of epochs, as the paper trains
  {
    Kokkos::Timer timer;
    qgml::Trainer<Real, Exec> trainer(config, data, ts, exec);
    r.history = trainer.train();
    qgml::fence(exec, "paper: training done");
    r.train_seconds = timer.seconds();
  }
  r.final_epoch_loss = r.history.empty() ? std::nan("") : r.history.back().total;

  qgml::LossSettings ls;
  ls.w = rs.w;
  const auto ev = qgml::evaluate(exec, config, data, ls);
  r.loss = ev.loss;
  r.reconstruction = ev.reconstruction;
  r.fluctuation = ev.fluctuation;
  r.points = qgml::to_host_data(data);
  r.xbar = qgml::to_host_data(ev.xbar);
  {
    auto s2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ev.sigma2);
    r.sigma2.assign(s2.data(), s2.data() + r.T);
  }
  for (int t = 0; t < r.T; ++t) {
    double xb = 0, x = 0, dx = 0;
    for (int k = 0; k < r.D; ++k) {
      xb += r.xbar(t, k) * r.xbar(t, k);
      x += r.points(t, k) * r.points(t, k);
      dx += (r.points(t, k) - r.xbar(t, k)) * (r.points(t, k) - r.xbar(t, k));
    }
    r.mean_xbar_norm += std::sqrt(xb) / r.T;
    r.mean_point_norm += std::sqrt(x) / r.T;
    r.mean_displacement += std::sqrt(dx) / r.T;
  }
  r.quantum = metric_spectrum(exec, config, data, qgml::MetricKind::quantum);
  if (rs.covariance) r.covariance = metric_spectrum(exec, config, data, qgml::MetricKind::covariance);
  r.matrices = qgml::to_host(config, exec);
  r.seconds = total.seconds();
  return r;
}

// ---------------------------------------------------------------------------------------------
// Output

inline std::string join_path(const std::string& dir, const std::string& file) {
  return (std::filesystem::path(dir) / file).string();
}

inline std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  return buf;
}

// A CSV with a header row; `values` is rows x header.size(), row-major.
inline void write_table_csv(const std::string& path, const std::vector<std::string>& header,
                            const std::vector<double>& values) {
  const std::size_t cols = header.size();
  std::string out;
  for (std::size_t c = 0; c < cols; ++c) out += (c ? "," : "") + header[c];
  out += "\n";
  for (std::size_t i = 0; i < values.size(); i += cols) {
    for (std::size_t c = 0; c < cols; ++c) out += (c ? "," : "") + number(values[i + c]);
    out += "\n";
  }
  qgml::write_file_atomically(path, out);
}

inline std::vector<std::string> coordinate_header(const std::string& prefix, int D) {
  std::vector<std::string> h;
  for (int k = 0; k < D; ++k) h.push_back(prefix + std::to_string(k));
  return h;
}

inline void write_spectrum_csv(const std::string& path, const Spectrum& s) {
  auto header = coordinate_header("e", s.D);
  header.push_back("d");
  std::vector<double> v;
  const std::size_t T = s.dimension.size();
  v.reserve(T * (s.D + 1));
  for (std::size_t t = 0; t < T; ++t) {
    for (int i = 0; i < s.D; ++i) v.push_back(s.eigenvalues[t * s.D + i]);
    v.push_back(s.dimension[t]);
  }
  write_table_csv(path, header, v);
}

// <name>_points.csv (x0..), <name>_xbar.csv (xbar0.., sigma2), <name>_metric.csv (Eq. 7: e0.. descending, d),
// <name>_covariance_metric.csv (if analysed), <name>_history.csv, <name>_matrices.npy/.json.
inline void write_run(const std::string& dir, const Result& r) {
  const std::string& n = r.settings.name;
  write_table_csv(join_path(dir, n + "_points.csv"), coordinate_header("x", r.D), r.points.values);
  {
    auto header = coordinate_header("xbar", r.D);
    header.push_back("sigma2");
    std::vector<double> v;
    v.reserve(std::size_t(r.T) * (r.D + 1));
    for (int t = 0; t < r.T; ++t) {
      for (int k = 0; k < r.D; ++k) v.push_back(r.xbar(t, k));
      v.push_back(r.sigma2[t]);
    }
    write_table_csv(join_path(dir, n + "_xbar.csv"), header, v);
  }
  write_spectrum_csv(join_path(dir, n + "_metric.csv"), r.quantum);
  if (r.settings.covariance) write_spectrum_csv(join_path(dir, n + "_covariance_metric.csv"), r.covariance);
  qgml::write_history_csv(join_path(dir, n + "_history.csv"), r.history);
  qgml::save_matrices(join_path(dir, n + "_matrices.npy"), r.matrices, qgml::Precision::double_precision);
}

inline std::string fractions(const Spectrum& s) {
  std::ostringstream out;
  out.precision(4);
  const auto f = s.summary.fraction();
  bool first = true;
  for (std::size_t d = 0; d < f.size(); ++d)
    if (s.summary.histogram[d] > 0) {
      out << (first ? "" : ", ") << "d=" << d << ": " << 100 * f[d] << "%";
      first = false;
    }
  if (s.failures > 0) out << ", eigensolver failures: " << s.failures;
  return out.str();
}

inline std::string eigenvalue_means(const Spectrum& s) {
  std::ostringstream out;
  out.precision(4);
  for (int i = 0; i < s.D; ++i) out << (i ? " / " : "") << s.mean_eigenvalues[i];
  return out.str();
}

inline void print_summary(const Result& r) {
  std::ostringstream out;
  out.precision(4);
  out << r.settings.name << " (N = " << r.settings.N << ", D = " << r.D << ", T = " << r.T << ", w = " << r.settings.w
      << ", lr = " << r.settings.learning_rate << ", batch = " << r.settings.batch << ", " << r.settings.epochs
      << " epochs, " << r.train_seconds << " s training)\n"
      << "  final epoch loss " << r.final_epoch_loss << "; on all points: loss " << r.loss << " = recon "
      << r.reconstruction << " + w * sigma^2 " << r.fluctuation << "\n"
      << "  mean |xbar| " << r.mean_xbar_norm << " (mean |x| " << r.mean_point_norm << "), mean |x - xbar| "
      << r.mean_displacement << "\n"
      << "  Eq. 7 metric eigenvalue means " << eigenvalue_means(r.quantum) << "; " << fractions(r.quantum) << "\n";
  if (r.settings.covariance)
    out << "  covariance metric eigenvalue means " << eigenvalue_means(r.covariance) << "; " << fractions(r.covariance)
        << "\n";
  std::cout << out.str() << std::flush;
}

// summary.csv: one row per run with the numbers printed by print_summary.
inline void write_summary_csv(const std::string& dir, const std::vector<Result>& runs) {
  std::string out =
      "name,N,D,T,w,learning_rate,batch,epochs,final_epoch_loss,loss,reconstruction,fluctuation,mean_xbar_norm,"
      "mean_point_norm,mean_displacement,e_means,d_fractions,cov_e_means,cov_d_fractions,train_seconds\n";
  auto list = [](const std::vector<double>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ";" : "") + number(v[i]);
    return s;
  };
  for (const auto& r : runs) {
    const auto& s = r.settings;
    out += s.name + "," + std::to_string(s.N) + "," + std::to_string(r.D) + "," + std::to_string(r.T) + "," +
           number(s.w) + "," + number(s.learning_rate) + "," + std::to_string(s.batch) + "," +
           std::to_string(s.epochs) + "," + number(r.final_epoch_loss) + "," + number(r.loss) + "," +
           number(r.reconstruction) + "," + number(r.fluctuation) + "," + number(r.mean_xbar_norm) + "," +
           number(r.mean_point_norm) + "," + number(r.mean_displacement) + "," + list(r.quantum.mean_eigenvalues) +
           "," + list(r.quantum.summary.fraction()) + "," + (s.covariance ? list(r.covariance.mean_eigenvalues) : "") +
           "," + (s.covariance ? list(r.covariance.summary.fraction()) : "") + "," + number(r.train_seconds) + "\n";
  }
  qgml::write_file_atomically(join_path(dir, "summary.csv"), out);
}

}  // namespace paper
