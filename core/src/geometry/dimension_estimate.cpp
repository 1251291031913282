#include "qgml/geometry/dimension_estimate.hpp"

#include <sstream>

#include "qgml/common/error.hpp"
#include "qgml/io/atomic_file.hpp"

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

void write_dimension_summary_json(const std::string& path, const DimensionSummary& s, const std::string& extra_fields) {
  std::ostringstream out;
  out.precision(10);
  out << "{\n  \"ambient_dimension\": " << s.ambient_dimension << ",\n  \"points\": " << s.points
      << ",\n  \"mode\": " << s.mode << ",\n  \"median\": " << s.median << ",\n  \"mean\": " << s.mean
      << ",\n  \"histogram\": [";
  for (std::size_t d = 0; d < s.histogram.size(); ++d) out << (d ? ", " : "") << s.histogram[d];
  out << "],\n  \"fraction\": [";
  const auto f = s.fraction();
  for (std::size_t d = 0; d < f.size(); ++d) out << (d ? ", " : "") << f[d];
  out << "]";
  if (!extra_fields.empty()) out << ",\n  " << extra_fields;
  out << "\n}\n";
  write_file_atomically(path, out.str());
}

}  // namespace qgml
