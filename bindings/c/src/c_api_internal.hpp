// The C interface's shared machinery: the handles' contents, the thread's last error, and `guarded`,
// which turns every exception into a status code so that none crosses the C boundary.
#pragma once

#pragma GCC visibility push(default)
#include "qgml/c_api.h"
#pragma GCC visibility pop

#include <complex>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <ios>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "qgml/common/file_error.hpp"
#include "qgml/model/initializers.hpp"

struct qgml_settings {
  std::string yaml_path;                                       // qgml_settings_load, or empty
  std::vector<std::pair<std::string, std::string>> overrides;  // qgml_settings_set, in order
};

struct qgml_model {
  qgml::HostMatrices matrices;  // D x N x N, row-major: (A_k)_ij at (k * N + i) * N + j
};

struct qgml_run {
  std::string dir;
  std::vector<double> loss, reconstruction, fluctuation;  // per epoch, from the run's history
};

namespace qgml::capi {

// A failure with its status, thrown by the argument checks.
struct Failure {
  qgml_status status;
  std::string message;
};

void set_last_error(const std::string& message);
void clear_last_error();

// Argument checks: QGML_ERROR_INVALID_ARGUMENT "<function>: <what>".
inline void require(bool ok, const char* function, const std::string& what) {
  if (!ok) throw Failure{QGML_ERROR_INVALID_ARGUMENT, std::string(function) + ": " + what};
}
inline void require_pointer(const void* p, const char* function, const char* name) {
  require(p != nullptr, function, std::string(name) + " is NULL");
}
// The handles the interface has returned and not yet destroyed (handles.cpp).
enum class HandleKind { settings, model, run };
void register_handle(const void* h, HandleKind kind);
// QGML_ERROR_INVALID_ARGUMENT "<function>: <name> ..." unless h is a live handle of `kind` (NULL too).
void require_live(const void* h, HandleKind kind, const char* function, const char* name);
inline void require_handle(const qgml_settings* s, const char* function, const char* name) {
  require_live(s, HandleKind::settings, function, name);
}
inline void require_handle(const qgml_model* m, const char* function, const char* name) {
  require_live(m, HandleKind::model, function, name);
}
inline void require_handle(const qgml_run* r, const char* function, const char* name) {
  require_live(r, HandleKind::run, function, name);
}
// Ends h's registration before its destroy; throws as require_live when it is not live.
void unregister_handle(const void* h, HandleKind kind, const char* function, const char* name);
// The handle as the caller's: registered, the unique_ptr's ownership handed over.
template <class Handle, HandleKind kind>
Handle* hand_out(std::unique_ptr<Handle> h) {
  register_handle(h.get(), kind);
  return h.release();
}
inline qgml_model* hand_out(std::unique_ptr<qgml_model> m) {
  return hand_out<qgml_model, HandleKind::model>(std::move(m));
}
inline qgml_run* hand_out(std::unique_ptr<qgml_run> r) { return hand_out<qgml_run, HandleKind::run>(std::move(r)); }
inline qgml_settings* hand_out(std::unique_ptr<qgml_settings> s) {
  return hand_out<qgml_settings, HandleKind::settings>(std::move(s));
}

// Kokkos must be running (qgml_initialize, or the host application).
void require_kokkos(const char* function);
// A points array: non-NULL, t >= 1, d >= 1, a known dtype.
void require_points(const void* points, std::int64_t t, int d, qgml_dtype dtype, const char* function);
void require_dtype(qgml_dtype dtype, const char* function);
// Every coordinate of a checked points array finite: QGML_ERROR_INVALID_ARGUMENT naming the first other.
void require_finite_points(const void* points, std::int64_t t, int d, qgml_dtype dtype, const char* function);

// The run directory's final configuration, or an interrupted run's last checkpointed one (qgml_run_model).
qgml::HostMatrices run_matrices(const qgml_run* r, const char* function);

// Writes text (NUL-terminated) into buf of size bytes; *needed = length + 1.
void copy_text(const std::string& text, char* buf, std::size_t size, std::size_t* needed, const char* function);

// Runs f, returning QGML_OK, or the status of the exception it threw with its message recorded.
// qgml::FileError is QGML_ERROR_IO, any other qgml::Error `error_status`.
template <class F>
int guarded(const char* function, qgml_status error_status, F&& f) noexcept {
  try {
    clear_last_error();
    f();
    return QGML_OK;
  } catch (const Failure& e) {
    set_last_error(e.message);
    return e.status;
  } catch (const qgml::FileError& e) {
    set_last_error(std::string(function) + ": " + e.what());
    return QGML_ERROR_IO;
  } catch (const qgml::Error& e) {
    set_last_error(std::string(function) + ": " + e.what());
    return error_status;
  } catch (const std::filesystem::filesystem_error& e) {
    set_last_error(std::string(function) + ": " + e.what());
    return QGML_ERROR_IO;
  } catch (const std::ios_base::failure& e) {
    set_last_error(std::string(function) + ": " + e.what());
    return QGML_ERROR_IO;
  } catch (const std::bad_alloc&) {
    set_last_error(std::string(function) + ": out of memory (std::bad_alloc)");
    return QGML_ERROR_RUNTIME;
  } catch (const std::exception& e) {
    set_last_error(std::string(function) + ": " + e.what());
    return QGML_ERROR_RUNTIME;
  } catch (...) {
    set_last_error(std::string(function) + ": an unknown exception");
    return QGML_ERROR_RUNTIME;
  }
}

}  // namespace qgml::capi
