// read_run_settings (run_settings.hpp): every setting by its key, typed once.
#include "settings/run_settings.hpp"

#include <optional>
#include <string>

#include "analysis/analysis.hpp"

namespace qgml::app {

namespace {

std::optional<int> integer_or_auto(const Config& c, const std::string& key) {
  if (c.is_auto(key)) return std::nullopt;
  return int(c.integer(key));
}

ModelSection model_settings(const Config& c) {
  ModelSection m;
  m.n = integer_or_auto(c, "model.N");
  m.n_origin = c.origin("model.N");
  m.outputs = integer_or_auto(c, "model.outputs");
  m.init = c.text("model.init");
  m.load = c.text("model.load");
  m.single_precision = c.text("model.precision") == "float";
  m.init_scale = c.real("model.init_scale");
  m.seed = std::uint64_t(c.integer("model.seed"));
  return m;
}

TrainingSection training_section(const Config& c) {
  TrainingSection t;
  TrainingSettings& s = t.settings;
  s.epochs = int(c.integer("training.epochs"));
  s.batch_size = int(c.integer("training.batch_size"));
  s.learning_rate = c.real("training.lr");
  s.schedule.kind = parse_schedule_kind(c.text("training.schedule"));
  s.schedule.gamma = c.real("training.gamma");
  s.schedule.step_size = int(c.integer("training.step_size"));
  s.schedule.min_lr = c.real("training.min_lr");
  s.loss.w = c.real("training.w");
  s.loss.penalty = parse_penalty_kind(c.text("training.penalty"));
  s.loss.penalty_weight = c.real("training.penalty_weight");
  s.loss.degeneracy = parse_degeneracy_policy(c.text("training.degeneracy"));
  s.seed = std::uint64_t(c.integer("training.seed"));
  s.checkpoint_every = int(c.integer("training.checkpoint_every"));
  s.early_stop_tolerance = c.real("training.early_stop");
  s.early_stop_window = int(c.integer("training.early_stop_window"));
  s.check_replicas = c.boolean("training.check_replicas");
  s.warm_start_eigh = c.boolean("training.warm_start");
  s.mixed_precision_reduction = c.boolean("training.mixed_precision");
  s.wide_packs = c.boolean("training.wide_packs");
  s.kernel = parse_loss_kernel(c.text("training.kernel"));
  s.task = parse_task(c.text("task"));
  s.supervised.huber_delta = c.real("training.huber_delta");
  s.supervised.lambda = c.real("training.unsupervised_weight");
  t.loss = c.text("training.loss");
  t.patience = integer_or_auto(c, "training.patience");
  return t;
}

AnalysisSection analysis_settings(const Config& c) {
  AnalysisSection a;
  a.enabled = c.boolean("analysis.enabled");
  a.chunk = int(c.integer("analysis.chunk"));
  GeometrySettings& s = a.geometry;
  s = geometry_settings(c.text("analysis.metric"), c.real("analysis.min_gap_ratio"), c.real("analysis.noise_floor"),
                        c.real("analysis.first_gap_exponent"));
  s.kernel = parse_geometry_kernel(c.text("analysis.kernel"));
  s.spread.enabled = c.boolean("analysis.spread_check");
  s.spread.neighbours = integer_or_auto(c, "analysis.spread_neighbours").value_or(0);
  s.spread.gap_below = c.real("analysis.spread_gap_below");
  s.spread.gap_promote = c.real("analysis.spread_gap_promote");
  s.spread.local = c.boolean("analysis.local_pca");
  s.spread.local_gap = c.real("analysis.local_pca_gap");
  s.spread.local_band = c.real("analysis.local_pca_band");
  s.spread.local_agree = c.boolean("analysis.local_pca_agree");
  s.spread.local_consistency = c.real("analysis.local_pca_consistency");
  s.spread.no_gap_ratio = c.real("analysis.no_gap_ratio");
  s.spread.distance_neighbours = int(c.integer("analysis.distance_neighbours"));
  s.spread.distance_share = c.real("analysis.distance_share");
  s.spread.promote = c.real("analysis.spread_promote");
  s.spread.demote = c.real("analysis.spread_demote");
  s.spread.band = c.real("analysis.spread_band");
  s.spread.promote_max = c.real("analysis.spread_promote_max");
  s.spread.scales = parse_spread_scales(c.text("analysis.spread_scales"));
  return a;
}

ProfilerOptions profiling_settings(const Config& c) {
  ProfilerOptions p;
  p.trace = c.boolean("profiling.enabled");
  p.kernels = c.boolean("profiling.kernels");
  p.record_memory = c.boolean("profiling.record_memory");
  p.max_events = c.integer("profiling.max_events");
  p.wait = int(c.integer("profiling.wait"));
  p.warmup = int(c.integer("profiling.warmup"));
  p.active = int(c.integer("profiling.active"));
  p.repeat = int(c.integer("profiling.repeat"));
  return p;
}

}  // namespace

DataSection read_data_settings(const Config& c) {
  DataSection d;
  d.generator = c.text("data.generator");
  d.file = c.text("data.file");
  d.array = c.text("data.array");
  d.placement = c.text("data.placement");
  d.points = c.integer("data.points");
  d.dimension = int(c.integer("data.dimension"));
  d.intrinsic_dimension = int(c.integer("data.intrinsic_dimension"));
  d.noise = c.real("data.noise");
  d.radius = c.real("data.radius");
  d.seed = std::uint64_t(c.integer("data.seed"));
  if (!c.is_auto("data.standardize")) d.standardize = c.boolean("data.standardize");
  d.target_column = c.integer("data.target_column");
  d.target_columns = c.text("data.target_columns");
  d.target_file = c.text("data.target_file");
  d.validation_file = c.text("data.validation_file");
  d.validation_fraction = c.real("data.validation_fraction");
  return d;
}

RunSettings read_run_settings(const Config& c) {
  RunSettings s;
  s.task = parse_task(c.text("task"));
  s.data = read_data_settings(c);
  s.model = model_settings(c);
  s.training = training_section(c);
  s.analysis = analysis_settings(c);
  s.output.directory = c.text("output.directory");
  s.output.name = c.text("output.name");
  s.output.plots = c.boolean("output.plots");
  s.profiling = profiling_settings(c);
  s.gpu_aware_mpi = c.boolean("mpi.gpu_aware");
  return s;
}

Config resolved_config(const Config& c, const RunSettings& s) {
  Config resolved = c;
  for (const SettingChoice& choice : s.choices) resolved.set(choice.key, choice.value, choice.origin);
  return resolved;
}

}  // namespace qgml::app
