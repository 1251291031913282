#include "qgml/geometry/dimension_estimate.hpp"

#include <cmath>
#include <cstdio>

#include "qgml/common/error.hpp"

#include "io/json_file.hpp"

namespace qgml {

std::vector<double> DimensionSummary::fraction() const {
  std::vector<double> f(histogram.size(), 0.0);
  for (std::size_t d = 0; d < histogram.size(); ++d) f[d] = points > 0 ? double(histogram[d]) / points : 0.0;
  return f;
}

DimensionSummary summarize_dimensions(const std::vector<long>& histogram) {
  QGML_REQUIRE(!histogram.empty(), "qgml::summarize_dimensions: empty histogram");
  DimensionSummary s;
  s.ambient_dimension = int(histogram.size()) - 1;
  s.histogram = histogram;
  double weighted = 0;
  for (std::size_t d = 0; d < histogram.size(); ++d) {
    s.points += histogram[d];
    weighted += double(d) * histogram[d];
  }
  s.mean = s.points > 0 ? weighted / s.points : 0.0;
  // Median of the sorted estimates: the average of the two middle ones for an even count.
  auto kth = [&](long k) {
    long seen = 0;
    for (std::size_t d = 0; d < histogram.size(); ++d) {
      seen += histogram[d];
      if (seen > k) return int(d);
    }
    return int(histogram.size()) - 1;
  };
  if (s.points > 0) s.median = 0.5 * (kth((s.points - 1) / 2) + kth(s.points / 2));
  long best = -1;
  for (std::size_t d = 0; d < histogram.size(); ++d) {
    const bool nearer = histogram[d] == best && std::abs(double(d) - s.median) < std::abs(s.mode - s.median);
    if (histogram[d] > best || nearer) {
      best = histogram[d];
      s.mode = int(d);
    }
  }
  long second = 0;
  for (std::size_t d = 0; d < histogram.size(); ++d)
    if (int(d) != s.mode && histogram[d] > second) {
      second = histogram[d];
      s.runner_up = int(d);
    }
  if (s.points == 0) {
    s.uncertain = true;
    s.verdict = "uncertain: no point has an estimate";
    return s;
  }
  const double at_mode = double(best) / double(s.points);
  char why[200];
  if (second > 0 && second == best) {
    std::snprintf(why, sizeof why, "uncertain: d = %d and d = %d are tied (%ld points each)", s.mode, s.runner_up,
                  best);
  } else if (at_mode < uncertain_fraction) {
    std::snprintf(why, sizeof why, "uncertain: the mode d = %d holds only %.0f %% of the points", s.mode,
                  100 * at_mode);
  } else if (second >= tie_fraction * double(best)) {
    std::snprintf(why, sizeof why, "uncertain: d = %d (%ld points) is nearly as frequent as the mode d = %d (%ld)",
                  s.runner_up, second, s.mode, best);
  } else {
    std::snprintf(why, sizeof why, "clear");
  }
  s.verdict = why;
  s.uncertain = s.verdict != "clear";
  return s;
}

std::string scale_verdict(const std::vector<ScaleDimension>& scales) {
  struct Run {
    int mode, k0, k1;
    double r0, r1;
  };
  std::vector<Run> runs;
  for (const ScaleDimension& s : scales) {
    if (s.mode < 0) continue;
    if (!runs.empty() && runs.back().mode == s.mode) {
      runs.back().k1 = s.neighbours;
      runs.back().r1 = s.radius;
    } else {
      runs.push_back({s.mode, s.neighbours, s.neighbours, s.radius, s.radius});
    }
  }
  if (runs.empty()) return "";
  auto range = [](const Run& r) {
    char text[160];
    if (r.k0 == r.k1)
      std::snprintf(text, sizeof text, "d = %d at k = %d (radius %.3g)", r.mode, r.k0, r.r0);
    else
      std::snprintf(text, sizeof text, "d = %d at k = %d .. %d (radius %.3g .. %.3g)", r.mode, r.k0, r.k1, r.r0, r.r1);
    return std::string(text);
  };
  if (runs.size() == 1) return "the same at every scale: " + range(runs[0]);
  std::string text = "scale-dependent: ";
  for (std::size_t i = 0; i < runs.size(); ++i) text += (i ? ", " : "") + range(runs[i]);
  return text;
}

void write_dimension_summary_json(const std::string& path, const DimensionSummary& s, const JsonFields& extra) {
  detail::Json j = {{"ambient_dimension", s.ambient_dimension},
                    {"points", s.points},
                    {"mode", s.mode},
                    {"median", s.median},
                    {"mean", s.mean},
                    {"runner_up", s.runner_up},
                    {"uncertain", s.uncertain},
                    {"verdict", s.verdict},
                    {"histogram", s.histogram},
                    {"fraction", s.fraction()}};
  if (s.interval.resamples > 0) {
    j["error"] = s.interval.error;
    j["interval"] = {s.interval.low, s.interval.high};
    j["mean_error"] = s.interval.mean_error;
    j["resamples"] = s.interval.resamples;
  }
  if (!s.scales.empty()) {
    detail::Json scales = detail::Json::array();
    for (const ScaleDimension& sc : s.scales)
      scales.push_back({{"neighbours", sc.neighbours},
                        {"radius", sc.radius},
                        {"points", sc.points},
                        {"mode", sc.mode},
                        {"fraction", sc.fraction},
                        {"local_mode", sc.local_mode}});
    j["scales"] = scales;
    j["scale_verdict"] = s.scale_verdict;
  }
  if (s.spread_neighbours > 0) j["spread_neighbours"] = s.spread_neighbours;
  if (!s.scales.empty()) {
    j["local_scale"] = s.local_scale;
    j["no_gap_fraction"] = s.no_gap_fraction;
    if (s.distance_neighbours > 0) {
      j["distance_neighbours"] = s.distance_neighbours;
      j["unresolved_fraction"] = s.unresolved_fraction;
      j["distance_share"] = s.distance_share;
      j["distance_reading"] = s.distance_reading;
      j["distance_dimension"] = s.distance_dimension;
    }
  }
  detail::append_fields(j, extra);
  detail::write_json_file(path, j);
}

}  // namespace qgml
