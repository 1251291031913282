#include "config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "qgml/common/file_error.hpp"
#include "qgml/io/parse_number.hpp"

namespace qgml::app {

namespace {

using T = SettingType;

std::vector<Setting> make_schema() {
  const std::vector<std::string> generators{"sphere",   "circle", "spiral", "line",   "swiss_roll", "hypercube",
                                            "sphere10", "affine", "helix",  "mobius", "curve13"};
  return {
      {"task",
       T::text,
       "unsupervised",
       "what to learn: the geometry of the points (unsupervised), or a target per point (regression, binary "
       "classification) through a learned target operator B (docs/supervised.md); written `task: ...` at the "
       "top level of a config file",
       {"unsupervised", "regression", "classification"}},
      {"data.generator", T::text, "sphere", "synthetic data set (ignored when data.file is set)", generators},
      {"data.file", T::text, "", "CSV or NPY file of points, one row per point", {}},
      {"data.array",
       T::text,
       "",
       "set by the C, Fortran and Python interfaces when they hand the points over in memory (what the "
       "array was); the program itself cannot read such points",
       {}},
      {"data.points", T::integer, "2500", "number of generated points T", {}, 1, 1e9},
      {"data.dimension", T::integer, "3", "ambient dimension D of sphere and hypercube data", {}, 1, 4096},
      {"data.intrinsic_dimension", T::integer, "2", "dimension of the hypercube data", {}, 1, 4096},
      {"data.noise", T::real, "0", "standard deviation of the Gaussian noise added to every coordinate", {}, 0, 1e6},
      {"data.radius", T::real, "1", "radius of the circle data", {}, 0, 1e12},
      {"data.seed", T::integer, "42", "seed of the data generator", {}, 0, 9.2e18},
      {"data.placement",
       T::text,
       "device",
       "where the points live: device memory, or host memory read by the GPU batch by batch (data larger "
       "than device memory; the same as device on CPUs)",
       {"device", "host"}},
      {"data.standardize",
       T::boolean,
       "auto",
       "subtract the mean and divide by the overall standard deviation (auto: when the data are not already "
       "centred at unit scale)",
       {},
       -1e300,
       1e300,
       true},
      {"data.target_column",
       T::integer,
       "-1",
       "regression, classification: the column of data.file holding the targets (0-based; negative counts from "
       "the end: -1 is the last); the other columns are the features",
       {},
       -4096,
       4095},
      {"data.target_columns",
       T::text,
       "",
       "regression with several outputs: the columns of data.file holding the targets, comma-separated in output "
       "order (e.g. -2,-1); one target operator per column (instead of data.target_column)",
       {}},
      {"data.target_file",
       T::text,
       "",
       "regression, classification: a one-column CSV or NPY file of the targets, one per point of data.file "
       "(all of whose columns are then features)",
       {}},
      {"data.validation_fraction",
       T::real,
       "0.2",
       "regression, classification: the fraction of the points held out for validation (a seeded random "
       "split, data.seed) when no data.validation_file is given; 0: none",
       {},
       0,
       0.9},
      {"data.validation_file",
       T::text,
       "",
       "regression, classification: validation points, with the columns of data.file (features and target)",
       {}},
      {"model.N",
       T::integer,
       "auto",
       "Hilbert-space dimension N (size of the matrices; auto: from D, docs/dimension.md)",
       {},
       1,
       4096,
       true},
      {"model.outputs",
       T::integer,
       "auto",
       "regression, classification: the number C of target operators B_c (auto: one per target column, one for "
       "two classes, one per class for more; docs/supervised.md section 11)",
       {},
       1,
       4096,
       true},
      {"model.init",
       T::text,
       "qr",
       "initial matrices: qr (spec 1.6), gaussian, fuzzy_sphere (D = 3)",
       {"qr", "gaussian", "fuzzy_sphere"}},
      {"model.init_scale", T::real, "0.1", "standard deviation of the gaussian initialisation", {}, 1e-300, 1e12},
      {"model.precision", T::text, "double", "floating-point precision", {"double", "float"}},
      {"model.seed", T::integer, "1", "seed of the initial matrices", {}, 0, 9.2e18},
      {"model.load", T::text, "", "start from a saved configuration (.npy) instead of model.init", {}},
      {"training.epochs", T::integer, "2000", "number of epochs (at most, with training.early_stop)", {}, 0, 1e9},
      {"training.batch_size", T::integer, "500", "points per mini-batch (0: the full data set)", {}, 0, 1e9},
      {"training.lr", T::real, "0.01", "Adam learning rate", {}, 1e-300, 1e6},
      {"training.schedule",
       T::text,
       "constant",
       "learning-rate schedule",
       {"constant", "exponential", "step", "cosine"}},
      {"training.gamma", T::real, "1", "decay factor of the exponential and step schedules", {}, 0, 1e6},
      {"training.step_size", T::integer, "1", "epochs between decays of the step schedule", {}, 1, 1e9},
      {"training.min_lr", T::real, "0", "final learning rate of the cosine schedule", {}, 0, 1e6},
      {"training.w", T::real, "0.5", "weight w of the quantum fluctuation in the loss d^2 + w sigma^2", {}, 0, 1e6},
      {"training.penalty",
       T::text,
       "none",
       "commutator penalty sum ||[A_i, A_j]||_F (frobenius) or its square",
       {"none", "frobenius", "frobenius_squared"}},
      {"training.penalty_weight", T::real, "0", "weight lambda of the commutator penalty", {}, 0, 1e12},
      {"training.loss",
       T::text,
       "auto",
       "regression, classification: the loss of the predictions y_hat_c = <psi_0|B_c|psi_0> (auto: mse for "
       "regression, logistic for two classes, softmax for more; docs/supervised.md)",
       {"auto", "mse", "mae", "huber", "logistic", "softmax"}},
      {"training.huber_delta",
       T::real,
       "1",
       "threshold of the huber loss (in standardised target units)",
       {},
       1e-300,
       1e300},
      {"training.unsupervised_weight",
       T::real,
       "0",
       "regression, classification: weight lambda of the unsupervised loss d^2 + w sigma^2 added to the supervised "
       "one",
       {},
       0,
       1e12},
      {"training.degeneracy",
       T::text,
       "regularize",
       "gradient at (nearly) degenerate ground states (spec 2.6)",
       {"regularize", "skip"}},
      {"training.seed", T::integer, "7", "seed of the per-epoch shuffles", {}, 0, 9.2e18},
      {"training.checkpoint_every", T::integer, "10", "epochs between checkpoints (0: only at the end)", {}, 0, 1e9},
      {"training.early_stop",
       T::real,
       "1e-3",
       "stop when the mean epoch loss of the last early_stop_window epochs differs from that of the window "
       "before by at most this, relative (0: off)",
       {},
       0,
       1},
      {"training.early_stop_window",
       T::integer,
       "25",
       "epochs per window of the early-stop test (1: compare consecutive epochs)",
       {},
       1,
       1e9},
      {"training.patience",
       T::integer,
       "auto",
       "regression, classification with validation points: stop when the mean validation loss has not "
       "improved for this many epochs, and end with the operators of the best epoch (auto: 20 with "
       "validation points, else 0; 0: off, the last epoch's operators)",
       {},
       0,
       1e9,
       true},
      {"training.check_replicas",
       T::boolean,
       "false",
       "with MPI: compare a hash of the matrices on all ranks after every epoch (debugging)",
       {}},
      {"training.kernel",
       T::text,
       "auto",
       "loss-gradient kernel: auto (fused-host on CPUs for 2 <= N <= 256, else separate; team on GPUs), fused-host, "
       "team (one team per point, the GPU kernel) or separate (batch kernels; the one warm starts use)",
       {"auto", "fused-host", "team", "separate"}},
      {"training.mixed_precision",
       T::boolean,
       "true",
       "model.precision = double on CPUs from N = 64: the ground state's Householder reduction in single "
       "precision, psi_0, E_0 and phi refined in double to double accuracy (points with a gap below 1e-4 of the "
       "spectrum's scale, and their pack, stay in double); false: all in double",
       {}},
      {"training.wide_packs",
       T::boolean,
       "true",
       "model.precision = double on CPUs built for 512-bit vectors (AVX-512), where the mixed precision does not "
       "run (N < 64): the fused kernel's packs hold 16 points, two vectors per operation, instead of 8; false: 8",
       {}},
      {"training.warm_start",
       T::boolean,
       "false",
       "start each point's eigensolve from its eigenvectors of the previous epoch (Jacobi; slower on CPUs)",
       {}},
      {"mpi.gpu_aware",
       T::boolean,
       "false",
       "with MPI: hand device pointers to MPI_Allreduce (GPU-aware MPI) instead of copying through the host",
       {}},
      {"analysis.enabled", T::boolean, "true", "estimate the intrinsic dimension after training", {}},
      {"analysis.kernel",
       T::text,
       "auto",
       "metric kernel: auto (packed on CPUs for 2 <= N <= 256, team on GPUs), packed (ground state and one "
       "tridiagonal solve per direction, one SIMD pack of points per thread; CPUs only), team (the same, one "
       "team per point) or separate (the whole eigendecomposition and sums over states)",
       {"auto", "packed", "team", "separate"}},
      {"analysis.metric",
       T::text,
       "quantum",
       "metric whose spectral gap gives the dimension",
       {"quantum", "covariance", "fubini_study"}},
      {"analysis.min_gap_ratio",
       T::real,
       "2",
       "smallest eigenvalue ratio that counts as a gap (else d = the number of directions)",
       {},
       1,
       1e300},
      {"analysis.noise_floor",
       T::real,
       "1e-3",
       "metric eigenvalues at most this times the largest are not directions (docs/dimension.md)",
       {},
       0,
       1},
      {"analysis.first_gap_exponent",
       T::real,
       "0.75",
       "a gap rho counts when rho >= rho_max^exponent; the first such gap gives d (1: the largest gap)",
       {},
       0,
       1},
      {"analysis.spread_check",
       T::boolean,
       "true",
       "check the gap rule's directions against the spread of the k nearest data points along the metric's "
       "eigenvectors (docs/dimension.md, \"The spread check\")",
       {}},
      {"analysis.spread_neighbours",
       T::integer,
       "auto",
       "k, the neighbours of the spread check (auto: 2 % of the points, within 10 .. 400)",
       {},
       1,
       100000,
       true},
      {"analysis.spread_promote",
       T::real,
       "0.7",
       "a direction below the gap counts when its spread is at least this times the first direction's",
       {},
       0,
       1e300},
      {"analysis.spread_promote_max",
       T::real,
       "1.1",
       "... and at most this times the first direction's (wider is the curvature of a normal direction)",
       {},
       0,
       1e300},
      {"analysis.spread_gap_below",
       T::real,
       "3",
       "... or when its spread is at least this times that of every direction below it (0: not this way)",
       {},
       0,
       1e300},
      {"analysis.spread_gap_promote",
       T::real,
       "0.3",
       "... and at least this times the first direction's",
       {},
       0,
       1e300},
      {"analysis.spread_band",
       T::real,
       "0.02",
       "a direction below the gap is promoted only when its metric eigenvalue is at most this times the largest",
       {},
       0,
       1},
      {"analysis.spread_demote",
       T::real,
       "0.4",
       "a direction above the gap does not count when its spread is below this times the first direction's",
       {},
       0,
       1e300},
      {"analysis.spread_scales",
       T::text,
       "10,20,50,100,200,400",
       "the dimension per scale and the local covariance's scales: neighbour counts, ascending, at most 8 "
       "(docs/dimension.md, \"The dimension per scale\"); none: neither",
       {}},
      {"analysis.local_pca",
       T::boolean,
       "true",
       "read the covariance of the nearest points as well, and combine it with the metric's estimate "
       "(docs/dimension.md, \"The local covariance\")",
       {}},
      {"analysis.local_pca_gap",
       T::real,
       "4",
       "the smallest ratio of the local covariance's eigenvalues that counts as a gap",
       {},
       1,
       1e300},
      {"analysis.local_pca_consistency",
       T::real,
       "2",
       "the local covariance is read at the smallest scale k whose mode d is at most (k - 1) / this",
       {},
       1,
       1e300},
      {"analysis.no_gap_ratio",
       T::real,
       "3",
       "a metric spectrum whose gap ratio is below this has no gap: there the local covariance decides",
       {},
       1,
       1e300},
      {"analysis.distance_neighbours",
       T::integer,
       "10",
       "where the metric and the local covariance resolve too few points, the dimension of the distances to "
       "this many nearest points decides there (0: never; docs/dimension.md, \"The neighbour distances\")",
       {},
       0,
       400},
      {"analysis.distance_share",
       T::real,
       "0.5",
       "the neighbour distances decide when at least this share of the points is resolved neither by the metric "
       "nor by the local covariance",
       {},
       0,
       1},
      {"analysis.chunk", T::integer, "25000", "points per analysis chunk (bounds memory)", {}, 1, 1e9},
      {"output.directory", T::text, "runs", "where run directories are created", {}},
      {"output.name", T::text, "", "run name (default: the config file's name)", {}},
      {"output.plots", T::boolean, "true", "write PNG plots when python3 with matplotlib is available", {}},
      {"profiling.enabled", T::boolean, "false", "record a Chrome trace of qgml's regions", {}},
      {"profiling.wait", T::integer, "0", "epochs to skip before recording", {}, 0, 1e9},
      {"profiling.warmup", T::integer, "1", "epochs recorded but discarded", {}, 0, 1e9},
      {"profiling.active", T::integer, "3", "epochs recorded", {}, 1, 1e9},
      {"profiling.repeat", T::integer, "1", "cycles of wait/warmup/active (0: until the end)", {}, 0, 1e9},
      {"profiling.kernels", T::boolean, "false", "also record every kernel, not only qgml's regions", {}},
      {"profiling.record_memory", T::boolean, "true", "track the high-water mark of allocated bytes", {}},
      {"profiling.max_events",
       T::integer,
       "200000",
       "bound of the event buffer (dropped events are counted)",
       {},
       1,
       1e9},
  };
}

// The Levenshtein distance of a and b where it is at most `cap`, else cap + 1: the minimum of a row of
// the distance table never decreases, so the rows stop once it exceeds cap.
std::size_t edit_distance(const std::string& a, const std::string& b, std::size_t cap) {
  const std::size_t apart = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (apart > cap) return cap + 1;
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    std::size_t row_min = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t d = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      if (prev[j] + 1 < d) d = prev[j] + 1;
      if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;
      cur[j] = d;
      if (d < row_min) row_min = d;
    }
    if (row_min > cap) return cap + 1;
    std::swap(prev, cur);
  }
  return prev[b.size()] > cap ? cap + 1 : prev[b.size()];
}

const Setting* find_setting(const std::string& key) {
  for (const auto& s : schema())
    if (s.key == key) return &s;
  return nullptr;
}

std::string lower(std::string s) {
  for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// The known setting a mistyped key most likely meant, or "" when none is close. A key is compared
// with every setting both whole ("training.learnin_rate" with "training.lr") and by its last component
// ("learnin_rate" with "lr", one more edit when the sections differ), and with common aliases
// ("learning_rate" for lr); case is ignored. Close: at most max(1, length / 3) edits of the component.
std::string closest_key(const std::string& key) {
  static const std::vector<std::pair<std::string, std::string>> aliases{
      {"learning_rate", "training.lr"}, {"batch", "training.batch_size"},     {"num_epochs", "training.epochs"},
      {"n_epochs", "training.epochs"},  {"hilbert_dim", "model.N"},           {"weight", "training.w"},
      {"quantum_weight", "training.w"}, {"dir", "output.directory"},          {"path", "data.file"},
      {"seed_data", "data.seed"},       {"precision_mode", "model.precision"}};
  const std::string k = lower(key);
  const auto dot = k.rfind('.');
  const std::string section = dot == std::string::npos ? "" : k.substr(0, dot);
  const std::string name = dot == std::string::npos ? k : k.substr(dot + 1);
  const std::size_t close = std::max<std::size_t>(1, name.size() / 3);
  std::string best;
  std::size_t best_d = ~std::size_t(0);
  // Only a distance at most `close` and below best_d can change the answer: the distances are computed
  // up to that cap (keys of kilobytes stay cheap).
  const auto consider = [&](const std::string& alias_name, const std::string& target) {
    if (best_d == 0) return;
    const std::size_t cap = std::min(close, best_d - 1);
    const std::string t = lower(target);
    const auto t_dot = t.find('.');
    const std::string t_section = t.substr(0, t_dot);
    const std::size_t penalty = section.empty() || section == t_section ? 0 : 1;
    const std::size_t by_name = penalty > cap ? cap + 1 : edit_distance(name, alias_name, cap - penalty) + penalty;
    const std::size_t d = std::min(edit_distance(k, t, cap), by_name);
    if (d <= cap) {
      best_d = d;
      best = target;
    }
  };
  for (const auto& s : schema()) consider(lower(s.key.substr(s.key.find('.') + 1)), s.key);
  for (const auto& [alias, target] : aliases) consider(alias, target);
  return best;
}

bool parse_bool(const std::string& v, bool& out) {
  if (v == "true" || v == "yes" || v == "on" || v == "1") return out = true, true;
  if (v == "false" || v == "no" || v == "off" || v == "0") return out = false, true;
  return false;
}

std::string range_problem(const Setting& s, double v) {
  if (v >= s.min && v <= s.max) return "";
  std::ostringstream r;
  r << "out of range: must be in [" << s.min << ", " << s.max << "]";
  return r.str();
}

// Checks value against the setting with the parser that reads it; returns an empty string or what is
// wrong. Integers: an optional sign and decimal digits only ("2e2", "0x3", "1.5" and "3 " are not
// integers). Reals: decimal numbers; inf and nan are accepted by no setting.
std::string check(const Setting& s, const std::string& value) {
  if (s.allows_auto && value == "auto") return "";
  if (s.type == T::integer) {
    long long v = 0;
    if (!parse_integer(value, v))
      return "expected an integer (an optional sign and decimal digits, nothing else)" +
             std::string(s.allows_auto ? " or auto" : "");
    return range_problem(s, double(v));
  }
  if (s.type == T::real) {
    double v = 0;
    if (!parse_real(value, v))
      return "expected a number (decimal, finite, e.g. 0.5 or 1e-3)" + std::string(s.allows_auto ? " or auto" : "");
    return range_problem(s, v);
  }
  if (s.type == T::boolean) {
    bool b;
    if (!parse_bool(value, b)) return std::string("expected true or false") + (s.allows_auto ? " or auto" : "");
  } else if (!s.choices.empty() && std::find(s.choices.begin(), s.choices.end(), value) == s.choices.end()) {
    std::string all;
    for (const auto& c : s.choices) all += (all.empty() ? "" : ", ") + c;
    return "expected one of " + all;
  }
  return "";
}

std::string unknown_setting(const std::string& key) {
  const std::string guess = closest_key(key);
  return "unknown setting '" + key + "' (" +
         (guess.empty() ? std::string("qgml --help lists the settings") : "did you mean '" + guess + "'?") + ")";
}

void apply(Config& c, const std::string& key, const std::string& value, const std::string& where) {
  const Setting* s = find_setting(key);
  if (!s) throw Error(where + ": " + unknown_setting(key));
  const std::string problem = check(*s, value);
  if (!problem.empty()) throw Error(where + ": " + key + " = '" + value + "': " + problem);
  c.set(key, value, where);
}

}  // namespace

const std::vector<Setting>& schema() {
  static const std::vector<Setting> s = make_schema();
  return s;
}

std::pair<std::string, std::string> take_option(const std::vector<std::string>& args, std::size_t& i,
                                                const std::string& context) {
  std::string key = args[i].substr(2), value;
  const auto eq = key.find('=');
  if (eq != std::string::npos) {
    value = key.substr(eq + 1);
    key = key.substr(0, eq);
  } else {
    if (i + 1 >= args.size()) throw Error(context + "option --" + key + " needs a value");
    value = args[++i];
  }
  return {key, value};
}

std::string setting_problem(const std::string& key, const std::string& value) {
  const Setting* s = find_setting(key);
  if (!s) throw Error("internal: setting '" + key + "' is not in the schema");
  return check(*s, value);
}

const std::string& schema_default(const std::string& key) {
  const Setting* s = find_setting(key);
  if (!s) throw Error("internal: setting '" + key + "' is not in the schema");
  return s->default_value;
}

std::string settings_help() {
  std::ostringstream out;
  std::string section;
  for (const auto& s : schema()) {
    const std::string sec = s.key.find('.') == std::string::npos ? "" : s.key.substr(0, s.key.find('.'));
    if (sec != section || sec.empty()) {
      out << "\n  " << (sec.empty() ? "(top level)" : sec) << ":\n";
      section = sec;
    }
    std::string def = s.default_value.empty() ? "\"\"" : s.default_value;
    out << "    --" << s.key << " " << def;
    out << std::string(s.key.size() + def.size() < 40 ? 40 - s.key.size() - def.size() : 1, ' ') << s.help;
    if (!s.choices.empty()) {
      out << " (";
      for (std::size_t i = 0; i < s.choices.size(); ++i) out << (i ? "|" : "") << s.choices[i];
      out << ")";
    }
    out << "\n";
  }
  return out.str();
}

namespace {
const std::string& concrete(const Config& c, const std::string& key) {
  const std::string& v = c.text(key);
  if (v == "auto" && find_setting(key) && find_setting(key)->allows_auto)
    throw Error("internal: setting '" + key + "' is still 'auto' (the program must choose it first)");
  return v;
}
}  // namespace

// Read with the parsers that validated them (check()); a value the program set itself is read the
// same way.
long Config::integer(const std::string& key) const {
  const std::string& v = concrete(*this, key);
  long long n = 0;
  if (!parse_integer(v, n)) throw Error("internal: setting " + key + " = '" + v + "' is not an integer");
  return long(n);
}
double Config::real(const std::string& key) const {
  const std::string& v = concrete(*this, key);
  double x = 0;
  if (!parse_real(v, x)) throw Error("internal: setting " + key + " = '" + v + "' is not a number");
  return x;
}
bool Config::is_auto(const std::string& key) const {
  const Setting* s = find_setting(key);
  return s && s->allows_auto && text(key) == "auto";
}
const std::string& Config::text(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw Error("internal: setting '" + key + "' is not in the schema");
  return it->second;
}
bool Config::boolean(const std::string& key) const {
  bool b = false;
  parse_bool(concrete(*this, key), b);
  return b;
}
const std::string& Config::origin(const std::string& key) const { return origins_.at(key); }
void Config::set(const std::string& key, const std::string& value, const std::string& origin) {
  values_[key] = value;
  origins_[key] = origin;
}

std::string Config::to_yaml() const {
  std::ostringstream out;
  std::string section;
  for (const auto& s : schema()) {
    const bool top = s.key.find('.') == std::string::npos;  // a top-level setting (task)
    const std::string sec = top ? "" : s.key.substr(0, s.key.find('.'));
    if (sec != section && !top) {
      out << sec << ":\n";
      section = sec;
    }
    const std::string& v = text(s.key);
    const bool quote = s.type == T::text;
    out << (top ? "" : "  ") << (top ? s.key : s.key.substr(sec.size() + 1)) << ": " << (quote ? "\"" + v + "\"" : v)
        << "  # " << origin(s.key) << "\n";
  }
  return out.str();
}

namespace {

// Each section and each setting once: a key given twice in one file is an error naming both lines
// (YAML leaves duplicate keys to the application; a silent "last one wins" hides typos).
void read_sections(Config& c, const YAML::Node& root, const std::string& path) {
  std::map<std::string, int> seen;  // section or setting -> line
  const auto once = [&](const std::string& key, int line, const char* what) {
    const auto [it, inserted] = seen.emplace(key, line);
    if (!inserted)
      throw Error(path + ":" + std::to_string(line) + ": duplicate " + what + " '" + key + "' (first on line " +
                  std::to_string(it->second) + ")");
  };
  for (const auto& section : root) {
    const std::string name = section.first.as<std::string>();
    const int line = section.first.Mark().line + 1;
    const std::string where = path + ":" + std::to_string(line);
    once(name, line, "section");
    const Setting* top = find_setting(name);
    if (top && name.find('.') == std::string::npos) {  // a top-level setting: `task: regression`
      if (!section.second.IsScalar())
        throw Error(where + ": " + name + ": expected a single value, got a " +
                    (section.second.IsSequence() ? "list" : "mapping"));
      apply(c, name, section.second.as<std::string>(), where);
      continue;
    }
    if (!section.second.IsMap()) {
      if (section.second.IsNull()) continue;
      throw Error(where + ": section '" + name + "' must be a mapping of settings");
    }
    for (const auto& item : section.second) {
      const std::string key = name + "." + item.first.as<std::string>();
      const int item_line = item.first.Mark().line + 1;
      const std::string at = path + ":" + std::to_string(item_line);
      once(key, item_line, "setting");
      if (!item.second.IsScalar() && !item.second.IsNull())
        throw Error(at + ": " + key + ": expected a single value, got a " +
                    (item.second.IsSequence() ? "list" : "mapping"));
      apply(c, key, item.second.IsNull() ? "" : item.second.as<std::string>(), at);
    }
  }
}

// The line (1-based) of the second "---" document marker that follows content, or 0.
int second_document_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  int number = 0, markers = 0;
  bool content = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("---", 0) == 0 && (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r')) {
      if (content || ++markers > 1) return number;
      continue;
    }
    const auto first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos && line[first] != '#' && line.rfind("%", 0) != 0) content = true;
  }
  return 0;
}

// The documents of a YAML text, at most two (a config file holds one). yaml-cpp's LoadAll loops forever,
// allocating a null document per turn, when its parser stops at a token it cannot place (a stray ',' or '}'
// after the top-level node, e.g. "{a: 1}, b"): HandleNextDocument then reports a new document without
// consuming the token (yaml-cpp 0.7 and 0.8, jbeder/yaml-cpp#1319). Counting the documents with the event
// parser and stopping at the second keeps the reading bounded; the first is then built by YAML::Load.
struct YamlDocuments {
  YAML::Node first;
  int count = 0;            // 0, 1 or 2 (two or more)
  YAML::Mark second_start;  // where the second document starts, when count == 2
};

class DocumentCounter : public YAML::EventHandler {
 public:
  int count = 0;
  YAML::Mark second_start;
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++count == 2) second_start = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

YamlDocuments load_documents(const std::string& text) {
  YamlDocuments d;
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentCounter counter;
  while (counter.count < 2 && parser.HandleNextDocument(counter)) {
  }
  d.count = counter.count;
  d.second_start = counter.second_start;
  if (d.count >= 1) d.first = YAML::Load(text);
  return d;
}

}  // namespace

Config load_config(const std::string& path, const std::vector<std::pair<std::string, std::string>>& overrides) {
  Config c;
  for (const auto& s : schema()) c.set(s.key, s.default_value, "default");
  if (!path.empty()) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      throw FileError("config '" + path + "': is a directory, expected a file");
    std::ifstream file(path, std::ios::binary);
    if (!file) throw FileError("config '" + path + "': cannot open");
    std::ostringstream text;
    text << file.rdbuf();
    YamlDocuments documents;
    try {
      documents = load_documents(text.str());
    } catch (const YAML::Exception& e) {
      throw FileError("config '" + path + "': line " + std::to_string(e.mark.line + 1) + ", column " +
                      std::to_string(e.mark.column + 1) + ": not valid YAML (" + e.msg + ")");
    }
    if (documents.count > 1) {
      const int line = second_document_line(path);
      if (line == 0)  // no '---' after content: text the parser could not place after the first node
        throw FileError("config '" + path + "': line " + std::to_string(documents.second_start.line + 1) + ", column " +
                        std::to_string(documents.second_start.column + 1) +
                        ": not valid YAML (unexpected text after the end of the document)");
      throw FileError(
          path + ":" + std::to_string(line) +
          ": a second YAML document; a config file holds one (remove the '---' and what follows, or merge it)");
    }
    const YAML::Node root = documents.count == 0 ? YAML::Node() : documents.first;
    if (!root.IsNull() && !root.IsMap())
      throw Error(
          "config '" + path +
          "': expected sections (data, model, training, mpi, analysis, output, profiling) and the top-level task");
    try {
      read_sections(c, root, path);
    } catch (const YAML::Exception& e) {  // e.g. a key that is itself a list
      throw Error("config '" + path + "': line " + std::to_string(e.mark.line + 1) + ": unexpected structure (" +
                  e.msg + ")");
    }
  }
  for (const auto& [key, value] : overrides) apply(c, key, value, "command line --" + key);
  return c;
}

}  // namespace qgml::app
