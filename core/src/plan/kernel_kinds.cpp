#include "qgml/plan/kernel_kinds.hpp"

#include "qgml/common/error.hpp"

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

GeometryKernel parse_geometry_kernel(const std::string& s) {
  if (s == "auto" || s == "automatic") return GeometryKernel::automatic;
  if (s == "team") return GeometryKernel::team;
  if (s == "separate") return GeometryKernel::separate;
  if (s == "packed") return GeometryKernel::packed;
  throw Error("unknown geometry kernel '" + s + "' (expected auto, packed, team or separate)");
}

std::string to_string(GeometryKernel k) {
  switch (k) {
    case GeometryKernel::automatic:
      return "auto";
    case GeometryKernel::team:
      return "team";
    case GeometryKernel::separate:
      return "separate";
    case GeometryKernel::packed:
      return "packed";
  }
  return "?";
}

std::string to_string(EighVariant v) {
  switch (v) {
    case EighVariant::automatic:
      return "auto";
    case EighVariant::serial:
      return "serial";
    case EighVariant::team:
      return "team";
    case EighVariant::packed:
      return "packed";
  }
  return "?";
}

std::string to_string(Backend b) { return b == Backend::host ? "host" : "device"; }

}  // namespace qgml
