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
  detail::append_fields(j, extra);
  detail::write_json_file(path, j);
}

}  // namespace qgml
