// The bindings of training: train and resume, with a stop callback that polls Ctrl-C (and an optional
// Python callable) between batches.
#include <memory>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <optional>
#include <string>
#include <utility>

#include "qgml/c_api.h"

#include "arrays.hpp"
#include "bindings.hpp"
#include "c_calls.hpp"
#include "handles.hpp"

using namespace nb::literals;

namespace qgml_python {

namespace {

struct StopState {
  nb::object user_stop;  // None or a callable returning a truth value
  std::optional<nb::python_error> error;
};

int stop_callback(void* user_data) {
  auto* s = static_cast<StopState*>(user_data);
  nb::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) {
    s->error.emplace();
    return 1;
  }
  if (!s->user_stop.is_none()) {
    try {
      return PyObject_IsTrue(s->user_stop().ptr()) == 1 ? 1 : 0;
    } catch (nb::python_error& e) {
      s->error.emplace(std::move(e));
      return 1;
    }
  }
  return 0;
}

// (run, interrupted). A Python exception raised while polling (KeyboardInterrupt from Ctrl-C, or one of
// the stop callable) is raised again here, with the run directory (which resumes) as its run_dir.
nb::tuple finish_training(const Result& r, qgml_run* out, StopState& state) {
  if (r.status != QGML_OK && r.status != QGML_ERROR_INTERRUPTED) {
    if (out) qgml_run_destroy(out);
    raise(r.status, r.message);
  }
  auto run = std::make_unique<Run>(out);
  if (state.error) {
    if (run->h) {
      const std::string dir =
          text([&](char* buf, size_t size, size_t* needed) { return qgml_run_directory(run->h, buf, size, needed); });
      PyObject_SetAttrString(state.error->value().ptr(), "run_dir", nb::str(dir.c_str()).ptr());
    }
    throw std::move(*state.error);
  }
  if (r.status == QGML_ERROR_INTERRUPTED && !run->h) raise(r.status, r.message);
  const bool interrupted = r.status == QGML_ERROR_INTERRUPTED;
  return nb::make_tuple(nb::cast(run.release(), nb::rv_policy::take_ownership), interrupted);
}

template <class Real>
nb::tuple train_points(const Settings& s, const Points<Real>& x, bool quiet, nb::object stop) {
  const auto [t, d] = points_shape<Real>(x);
  StopState state{std::move(stop), std::nullopt};
  qgml_settings* sh = s.get();
  qgml_run* out = nullptr;
  const Result r = call_released(
      [&] { return qgml_train(sh, x.data(), t, d, dtype_of<Real>(), quiet, stop_callback, &state, &out); });
  return finish_training(r, out, state);
}

nb::tuple train_settings(const Settings& s, bool quiet, nb::object stop) {
  StopState state{std::move(stop), std::nullopt};
  qgml_settings* sh = s.get();
  qgml_run* out = nullptr;
  const Result r =
      call_released([&] { return qgml_train(sh, nullptr, 0, 0, QGML_FLOAT64, quiet, stop_callback, &state, &out); });
  return finish_training(r, out, state);
}

template <class Real>
nb::tuple resume_points(const std::string& dir, const Points<Real>& x, bool quiet, nb::object stop) {
  const auto [t, d] = points_shape<Real>(x);
  StopState state{std::move(stop), std::nullopt};
  qgml_run* out = nullptr;
  const Result r = call_released(
      [&] { return qgml_resume(dir.c_str(), x.data(), t, d, dtype_of<Real>(), quiet, stop_callback, &state, &out); });
  return finish_training(r, out, state);
}

nb::tuple resume_settings(const std::string& dir, bool quiet, nb::object stop) {
  StopState state{std::move(stop), std::nullopt};
  qgml_run* out = nullptr;
  const Result r = call_released(
      [&] { return qgml_resume(dir.c_str(), nullptr, 0, 0, QGML_FLOAT64, quiet, stop_callback, &state, &out); });
  return finish_training(r, out, state);
}

}  // namespace

void bind_training(nb::module_& mod) {
  // Overloads: float64 and float32 points are taken as they are when C-contiguous (first pass, no
  // conversion); anything else converts to a C-contiguous float64 array (the last overload).
  mod.def("train", &train_points<double>, "settings"_a, "points"_a.noconvert(), "quiet"_a, "stop"_a.none());
  mod.def("train", &train_points<float>, "settings"_a, "points"_a.noconvert(), "quiet"_a, "stop"_a.none());
  mod.def("train", &train_points<double>, "settings"_a, "points"_a, "quiet"_a, "stop"_a.none());
  mod.def("train", &train_settings, "settings"_a, "quiet"_a, "stop"_a.none(),
          "Trains as `qgml train`; (Run, interrupted).");
  mod.def("resume", &resume_points<double>, "run_dir"_a, "points"_a.noconvert(), "quiet"_a, "stop"_a.none());
  mod.def("resume", &resume_points<float>, "run_dir"_a, "points"_a.noconvert(), "quiet"_a, "stop"_a.none());
  mod.def("resume", &resume_points<double>, "run_dir"_a, "points"_a, "quiet"_a, "stop"_a.none());
  mod.def("resume", &resume_settings, "run_dir"_a, "quiet"_a, "stop"_a.none(),
          "Continues a run directory as `qgml train --resume`; (Run, interrupted).");
}

}  // namespace qgml_python
