// The registry of live handles: every handle the interface returns is recorded until its destroy, so
// that a destroyed, foreign or mistyped pointer is a status and a message instead of a read of freed
// memory. An address reused by a later allocation passes as that new handle; the registry catches the
// common mistakes (a second destroy, a use after destroy before the next create), not every one.
#include <mutex>
#include <unordered_map>

#include "c_api_internal.hpp"

namespace qgml::capi {

namespace {
std::mutex registry_mutex;
std::unordered_map<const void*, HandleKind>& registry() {
  static std::unordered_map<const void*, HandleKind> live;
  return live;
}

const char* kind_name(HandleKind kind) {
  switch (kind) {
    case HandleKind::settings:
      return "qgml_settings";
    case HandleKind::model:
      return "qgml_model";
    case HandleKind::run:
      return "qgml_run";
  }
  return "handle";
}

// "" when h is a live handle of `kind`, else why not.
std::string problem(const void* h, HandleKind kind) {
  const auto found = registry().find(h);
  if (found == registry().end())
    return std::string("is not a live ") + kind_name(kind) + " (destroyed already, or not created by this library)";
  if (found->second != kind) return std::string("is a ") + kind_name(found->second) + ", not a " + kind_name(kind);
  return "";
}
}  // namespace

void register_handle(const void* h, HandleKind kind) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  registry()[h] = kind;
}

void require_live(const void* h, HandleKind kind, const char* function, const char* name) {
  require_pointer(h, function, name);
  std::lock_guard<std::mutex> lock(registry_mutex);
  const std::string why = problem(h, kind);
  if (!why.empty()) throw Failure{QGML_ERROR_INVALID_ARGUMENT, std::string(function) + ": " + name + " " + why};
}

void unregister_handle(const void* h, HandleKind kind, const char* function, const char* name) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  const std::string why = problem(h, kind);
  if (!why.empty()) throw Failure{QGML_ERROR_INVALID_ARGUMENT, std::string(function) + ": " + name + " " + why};
  registry().erase(h);
}

}  // namespace qgml::capi
