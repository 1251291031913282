// Evaluate, quantum metric and dimension on caller-owned points: being implemented.
#include "c_api_internal.hpp"

namespace {
int not_yet(const char* f) {
  return qgml::capi::guarded(f, QGML_ERROR_RUNTIME, [&] {
    throw qgml::capi::Failure{QGML_ERROR_RUNTIME, std::string(f) + ": not implemented yet"};
  });
}
}  // namespace

extern "C" {
int qgml_evaluate(const qgml_model*, const void*, int64_t, int, qgml_dtype, double, void*, void*, void*, double*) {
  return not_yet("qgml_evaluate");
}
int qgml_quantum_metric(const qgml_model*, const void*, int64_t, int, qgml_dtype, void*, void*) {
  return not_yet("qgml_quantum_metric");
}
int qgml_dimension(const qgml_model*, const qgml_settings*, const void*, int64_t, int, qgml_dtype, int*, int*, int*) {
  return not_yet("qgml_dimension");
}
}
