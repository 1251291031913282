// Training (qgml_train, qgml_resume) and run directories: being implemented.
#include "c_api_internal.hpp"

namespace {
int not_yet(const char* f) {
  return qgml::capi::guarded(f, QGML_ERROR_RUNTIME, [&] {
    throw qgml::capi::Failure{QGML_ERROR_RUNTIME, std::string(f) + ": not implemented yet"};
  });
}
}  // namespace

extern "C" {
int qgml_train(const qgml_settings*, const void*, int64_t, int, qgml_dtype, int, qgml_stop_callback, void*,
               qgml_run**) {
  return not_yet("qgml_train");
}
int qgml_resume(const char*, const void*, int64_t, int, qgml_dtype, int, qgml_stop_callback, void*, qgml_run**) {
  return not_yet("qgml_resume");
}
int qgml_run_open(const char*, qgml_run**) { return not_yet("qgml_run_open"); }
int qgml_run_directory(const qgml_run*, char*, size_t, size_t*) { return not_yet("qgml_run_directory"); }
int qgml_run_model(const qgml_run*, qgml_model**) { return not_yet("qgml_run_model"); }
int qgml_run_history(const qgml_run*, int*, double*, double*, double*) { return not_yet("qgml_run_history"); }
int qgml_run_dimension(const qgml_run*, int*, int*) { return not_yet("qgml_run_dimension"); }
void qgml_run_destroy(qgml_run* r) { delete r; }
}
