#include "qgml/train/loss_settings.hpp"

#include "qgml/common/error.hpp"

namespace qgml {

PenaltyKind parse_penalty_kind(const std::string& s) {
  if (s == "none") return PenaltyKind::none;
  if (s == "frobenius" || s == "P1") return PenaltyKind::frobenius;
  if (s == "frobenius_squared" || s == "P2") return PenaltyKind::frobenius_squared;
  throw Error("unknown penalty kind '" + s + "' (expected none, frobenius or frobenius_squared)");
}

std::string to_string(PenaltyKind k) {
  switch (k) {
    case PenaltyKind::none:
      return "none";
    case PenaltyKind::frobenius:
      return "frobenius";
    case PenaltyKind::frobenius_squared:
      return "frobenius_squared";
  }
  return "?";
}

DegeneracyPolicy parse_degeneracy_policy(const std::string& s) {
  if (s == "regularize") return DegeneracyPolicy::regularize;
  if (s == "skip") return DegeneracyPolicy::skip;
  throw Error("unknown degeneracy policy '" + s + "' (expected regularize or skip)");
}

std::string to_string(DegeneracyPolicy p) { return p == DegeneracyPolicy::regularize ? "regularize" : "skip"; }

}  // namespace qgml
