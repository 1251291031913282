#include "qgml/geometry/quantum_geometry.hpp"

#include "qgml/common/error.hpp"

namespace qgml {

MetricKind parse_metric_kind(const std::string& s) {
  if (s == "quantum" || s == "eq7") return MetricKind::quantum;
  if (s == "covariance") return MetricKind::covariance;
  if (s == "fubini_study") return MetricKind::fubini_study;
  throw Error("unknown metric kind '" + s + "' (expected quantum, covariance or fubini_study)");
}

std::string to_string(MetricKind k) {
  switch (k) {
    case MetricKind::quantum:
      return "quantum";
    case MetricKind::covariance:
      return "covariance";
    case MetricKind::fubini_study:
      return "fubini_study";
  }
  return "?";
}

}  // namespace qgml
