#include "qgml/geometry/dimension_estimate.hpp"

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
  long best = -1;
  double weighted = 0;
  for (std::size_t d = 0; d < histogram.size(); ++d) {
    s.points += histogram[d];
    weighted += double(d) * histogram[d];
    if (histogram[d] > best) {
      best = histogram[d];
      s.mode = int(d);
    }
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
  return s;
}

void write_dimension_summary_json(const std::string& path, const DimensionSummary& s, const JsonFields& extra) {
  detail::Json j = {{"ambient_dimension", s.ambient_dimension},
                    {"points", s.points},
                    {"mode", s.mode},
                    {"median", s.median},
                    {"mean", s.mean},
                    {"histogram", s.histogram},
                    {"fraction", s.fraction()}};
  detail::append_fields(j, extra);
  detail::write_json_file(path, j);
}

}  // namespace qgml
