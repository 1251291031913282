// Dimension analysis of a trained configuration on its data, written into a run or output directory:
// per_point.csv (point, reconstruction, metric eigenvalues, estimate) and dimension_summary.json.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/common/memory_budget.hpp"
#include "qgml/geometry/analyze_dimension.hpp"
#include "qgml/parallel/communicator.hpp"

#include "common/format.hpp"
#include "settings/run_settings.hpp"

namespace qgml::app {

// analysis.spread_scales: "10,20,50" (ascending neighbour counts) or "none"; an error naming
// the setting otherwise (qgml::Error).
std::vector<int> parse_spread_scales(const std::string& text);
GeometrySettings geometry_settings(const std::string& metric, double min_gap_ratio, double noise_floor,
                                   double first_gap_exponent);

// The summary lines every command prints: the histogram, mode/median/mean, the verdict.
std::vector<std::string> summary_lines(const DimensionSummary& s);

// Runs python3 plot_run.py on the run directory when python3 with matplotlib is available.
void plot_run(const std::string& dir, bool quiet);

// Writes per_point.csv and dimension_summary.json of `analysis` (rank 0's rows) into out_dir on rank
// 0. A collective: a failed write fails on every rank.
// `extra`: further fields of dimension_summary.json (e.g. the run's automatic choices).
void write_analysis(const DimensionAnalysis& analysis, const std::string& out_dir, Communicator& comm,
                    const JsonFields& extra = {});

// How a caller of check_analysis_needs names the analysis and its settings in a refusal.
struct AnalysisPreflight {
  std::string what = "the dimension analysis";       // the analysis, e.g. "the dimension analysis after training"
  std::string refusal = "refused before it starts";  // what happens instead
  std::string kernel_setting = "analysis.kernel";    // the setting (or option) of the kernel; empty: none
  std::string chunk_setting = "analysis.chunk";      // the setting (or option) of the chunk
  std::string otherwise;                             // further remedies, "..., " (may be empty)
  std::string beside = "the data";                   // what `other_bytes` holds, for the message
};

// The pre-flight check of every dimension analysis (qgml train, qgml estimate, the C API): throws an
// Error naming the kernel, N, D, the need, the limit and the settings that fit when analyze_dimension of
// `local` points (and `gathered` more on this rank) of D = d at N = n in chunks of `chunk` cannot run:
// the team scratch per team of its kernel exceeds what Kokkos offers per team (the packed kernel's D x D
// metric per point), or its buffers beside `other_bytes` exceed the memory budget.
template <class Real, class ExecSpace>
void check_analysis_needs(const GeometrySettings& settings, int chunk, std::int64_t local, std::int64_t gathered, int d,
                          int n, double other_bytes, const MemoryBudget& budget, const AnalysisPreflight& p) {
  const auto needs_of = [&](GeometryKernel kernel, int chunk_points) {
    GeometrySettings s = settings;
    s.kernel = kernel;
    return analyze_dimension_needs<Real, ExecSpace>(d, n, local, gathered, s, chunk_points);
  };
  const auto fits_memory = [&](const GeometryNeeds& g) {
    return !budget.known() || other_bytes + g.memory_bytes <= budget.bytes;
  };
  const GeometryNeeds needs = needs_of(settings.kernel, chunk);
  const long long chunk_points = std::max<long long>(1, std::min<long long>(chunk, local));
  // The largest chunk of `kernel` that fits the budget beside other_bytes (0: none), below chunk_points;
  // the needs grow linearly in the chunk.
  const auto largest_chunk = [&](GeometryKernel kernel) -> long long {
    if (chunk_points <= 1 || !budget.known()) return 0;
    const double one = needs_of(kernel, 1).memory_bytes, per_point = needs_of(kernel, 2).memory_bytes - one;
    const double room = budget.bytes - other_bytes - (one - per_point);
    const long long most = per_point > 0 && room > 0 ? (long long)(room / per_point) : 0;
    return std::min(most, chunk_points - 1);
  };
  const std::string what = format("%s (%s = %s, N = %d, D = %d, %lld points in chunks of %lld)", p.what.c_str(),
                                  p.kernel_setting.empty() ? "kernel" : p.kernel_setting.c_str(),
                                  to_string(needs.kernel).c_str(), n, d, (long long)local, chunk_points);
  // The other kernels that would fit (at a smaller chunk where only that fits), for the message.
  std::string others;
  for (const GeometryKernel k : {GeometryKernel::packed, GeometryKernel::team, GeometryKernel::separate}) {
    if (p.kernel_setting.empty() || k == needs.kernel || (k == GeometryKernel::packed && !is_host_space_v<ExecSpace>))
      continue;
    try {
      const GeometryNeeds g = needs_of(k, chunk);
      if (!g.scratch_fits()) continue;
      if (fits_memory(g))
        others += (others.empty() ? "" : " or ") + to_string(k);
      else if (const long long most = largest_chunk(k); most >= 1)
        others += (others.empty() ? "" : " or ") +
                  format("%s with %s %lld or less", to_string(k).c_str(), p.chunk_setting.c_str(), most);
    } catch (const Error&) {
      // a kernel this N or this execution space does not take
    }
  }
  const std::string kernels = others.empty() ? "" : "set " + p.kernel_setting + " " + others + ", ";
  if (!needs.scratch_fits())
    throw Error(format(
        "%s needs %zu bytes (%.1f MiB) of scratch per team, more than the %zu bytes (%.1f MiB) per team "
        "that %s offers: %s (%s%sor use data with fewer coordinates D; the packed kernel's scratch grows "
        "as D^2, the team kernel's as D N)",
        what.c_str(), needs.scratch_bytes, needs.scratch_bytes / 1048576.0, needs.scratch_limit,
        needs.scratch_limit / 1048576.0, ExecSpace::name(), p.refusal.c_str(), kernels.c_str(), p.otherwise.c_str()));
  if (fits_memory(needs)) return;
  const long long most = largest_chunk(needs.kernel);
  const std::string smaller =
      most >= 1 ? format("set %s %lld or less, ", p.chunk_setting.c_str(), most) : std::string();
  throw Error(
      format("%s needs about %.2f GiB of memory beside the %.2f GiB of %s; this machine has %.2f GiB "
             "available (%s; %.0f bytes needed in all, %.0f bytes available), of which qgml uses at most "
             "%.0f %%: %s (%s%s%sor use data with fewer coordinates D; each point of a chunk holds D x D "
             "metrics)",
             what.c_str(), needs.memory_bytes / (1 << 30), other_bytes / (1 << 30), p.beside.c_str(),
             budget.available / (1 << 30), budget.source.c_str(), other_bytes + needs.memory_bytes, budget.available,
             100 * memory_budget_share, p.refusal.c_str(), smaller.c_str(), kernels.c_str(), p.otherwise.c_str()));
}

// The analysis of `data` with the settings `s` (analysis.*, in chunks of s.chunk points), written into
// out_dir (write_analysis).
template <class Real, class ExecSpace, class PointsView>
DimensionSummary analyze(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                         const PointsView& data, const AnalysisSection& s, const std::string& out_dir,
                         Communicator& comm, const JsonFields& extra = {}) {
  const DimensionAnalysis a = analyze_dimension(exec, config, data, s.geometry, s.chunk, comm);
  write_analysis(a, out_dir, comm, extra);
  return a.summary;
}

}  // namespace qgml::app
