#include "qgml/train/loss_settings.hpp"

#include "qgml/common/error.hpp"
#include "qgml/train/loss_kernel.hpp"

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

namespace qgml {

LossKernel parse_loss_kernel(const std::string& s) {
  if (s == "auto" || s == "automatic") return LossKernel::automatic;
  if (s == "fused-host") return LossKernel::fused_host;
  if (s == "team") return LossKernel::team;
  if (s == "separate") return LossKernel::separate;
  throw Error("unknown loss kernel '" + s + "' (expected auto, fused-host, team or separate)");
}

std::string to_string(LossKernel k) {
  switch (k) {
    case LossKernel::automatic:
      return "auto";
    case LossKernel::fused_host:
      return "fused-host";
    case LossKernel::team:
      return "team";
    case LossKernel::separate:
      return "separate";
  }
  return "?";
}

}  // namespace qgml
