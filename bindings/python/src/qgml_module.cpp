// qgml._qgml: the C interface (bindings/c/include/qgml/c_api.h) for Python, with nanobind. Arrays come
// in as NumPy arrays without a copy when they are C-contiguous and of the dtype of the call (float64 or
// float32 points, complex128 or complex64 matrices), converted otherwise; outputs are arrays the caller
// (the pure-Python layer, bindings/python/qgml) allocated. The GIL is released around every call that
// runs kernels. The pure-Python package documents the user-facing API; this module is its plumbing.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <memory>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "qgml/c_api.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// ---- errors: the C status as a Python exception carrying the library's message ----

[[noreturn]] void raise(int status, const std::string& message) {
  PyObject* type = PyExc_RuntimeError;
  switch (status) {
    case QGML_ERROR_INVALID_ARGUMENT:
      type = PyExc_ValueError;
      break;
    case QGML_ERROR_IO:
      type = PyExc_OSError;
      break;
    case QGML_ERROR_NUMERICAL:
      type = PyExc_FloatingPointError;
      break;
    case QGML_ERROR_INTERRUPTED:
      type = PyExc_KeyboardInterrupt;
      break;
    default:
      break;
  }
  PyErr_SetString(type, message.empty() ? "qgml: unknown error" : message.c_str());
  throw nb::python_error();
}

// The message must be read on the thread of the failed call, before any other qgml call there.
struct Result {
  int status = QGML_OK;
  std::string message;
};

template <class F>
Result call_released(F&& f) {
  Result r;
  {
    nb::gil_scoped_release release;
    r.status = f();
    if (r.status != QGML_OK) r.message = qgml_last_error();
  }
  return r;
}

void check(const Result& r) {
  if (r.status != QGML_OK) raise(r.status, r.message);
}

void check(int status) {
  if (status != QGML_OK) raise(status, qgml_last_error());
}

// ---- handles: every live one is registered so that finalize() can destroy them before Kokkos ends ----

struct Handle {
  Handle() { registry().insert(this); }
  virtual ~Handle() { registry().erase(this); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  virtual void release() = 0;
  static std::set<Handle*>& registry() {
    static std::set<Handle*> handles;
    return handles;
  }
};

[[noreturn]] void raise_released(const char* what) {
  PyErr_Format(PyExc_RuntimeError, "qgml: this %s was released by qgml.finalize()", what);
  throw nb::python_error();
}

struct Settings final : Handle {
  qgml_settings* h = nullptr;
  Settings() { check(qgml_settings_create(&h)); }
  ~Settings() override { release(); }
  void release() override {
    if (h) qgml_settings_destroy(h);
    h = nullptr;
  }
  qgml_settings* get() const {
    if (!h) raise_released("Settings");
    return h;
  }
};

struct Model final : Handle {
  qgml_model* h = nullptr;
  explicit Model(qgml_model* m) : h(m) {}
  ~Model() override { release(); }
  void release() override {
    if (h) qgml_model_destroy(h);
    h = nullptr;
  }
  qgml_model* get() const {
    if (!h) raise_released("Model");
    return h;
  }
};

struct Run final : Handle {
  qgml_run* h = nullptr;
  explicit Run(qgml_run* r) : h(r) {}
  ~Run() override { release(); }
  void release() override {
    if (h) qgml_run_destroy(h);
    h = nullptr;
  }
  qgml_run* get() const {
    if (!h) raise_released("Run");
    return h;
  }
};

// A text out of a (buf, size, needed) call of the C interface.
template <class F>
std::string text(F&& f) {
  std::vector<char> buf(256);
  size_t needed = 0;
  int status = f(buf.data(), buf.size(), &needed);
  if (status == QGML_ERROR_INVALID_ARGUMENT && needed > buf.size()) {
    buf.resize(needed);
    status = f(buf.data(), buf.size(), &needed);
  }
  check(status);
  return std::string(buf.data());
}

// ---- arrays ----

template <class Real>
constexpr qgml_dtype dtype_of() {
  return std::is_same_v<Real, float> ? QGML_FLOAT32 : QGML_FLOAT64;
}

template <class T, class... Extra>
using In = nb::ndarray<const T, nb::c_contig, nb::device::cpu, Extra...>;
template <class T, class... Extra>
using Out = nb::ndarray<T, nb::c_contig, nb::device::cpu, Extra...>;
template <class Real>
using Points = In<Real, nb::ndim<2>>;

[[noreturn]] void bad_shape(const std::string& message) { throw nb::value_error(("qgml: " + message).c_str()); }

std::string shape_text(size_t ndim, const int64_t* shape) {
  std::string s = "(";
  for (size_t i = 0; i < ndim; ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (ndim == 1 ? ",)" : ")");
}

template <class A>
void expect_shape(const char* name, const A& a, std::initializer_list<int64_t> shape) {
  bool ok = a.ndim() == shape.size();
  size_t i = 0;
  for (int64_t n : shape) ok = ok && i < a.ndim() && a.shape(i++) == static_cast<size_t>(n);
  if (!ok) {
    std::vector<int64_t> have(a.ndim());
    for (size_t k = 0; k < a.ndim(); ++k) have[k] = static_cast<int64_t>(a.shape(k));
    bad_shape(std::string(name) + " has shape " + shape_text(have.size(), have.data()) + ", expected " +
              shape_text(shape.size(), shape.begin()));
  }
}

template <class Real>
std::pair<int64_t, int> points_shape(const Points<Real>& x) {
  const auto t = static_cast<int64_t>(x.shape(0));
  const auto d = static_cast<int64_t>(x.shape(1));
  if (d > INT32_MAX) bad_shape("points have too many coordinates");
  return {t, static_cast<int>(d)};
}

template <class T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> owned_vector(std::vector<T>&& v) {
  auto* heap = new std::vector<T>(std::move(v));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(heap->data(), {heap->size()}, owner);
}

// ---- training: a stop callback that polls Ctrl-C (and an optional Python callable) between batches ----

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

// ---- analysis on caller-owned points ----

template <class Real>
double evaluate(const Model& m, const Points<Real>& x, double w, std::optional<Out<Real>> xbar,
                std::optional<Out<Real>> sigma2, std::optional<Out<Real>> energy) {
  const auto [t, d] = points_shape<Real>(x);
  if (xbar) expect_shape("xbar", *xbar, {t, d});
  if (sigma2) expect_shape("sigma2", *sigma2, {t});
  if (energy) expect_shape("energy", *energy, {t});
  qgml_model* mh = m.get();
  void* xb = xbar ? xbar->data() : nullptr;
  void* s2 = sigma2 ? sigma2->data() : nullptr;
  void* e0 = energy ? energy->data() : nullptr;
  double loss = 0;
  check(call_released([&] { return qgml_evaluate(mh, x.data(), t, d, dtype_of<Real>(), w, xb, s2, e0, &loss); }));
  return loss;
}

template <class Real>
void quantum_metric(const Model& m, const Points<Real>& x, std::optional<Out<Real>> metric,
                    std::optional<Out<Real>> eigenvalues) {
  const auto [t, d] = points_shape<Real>(x);
  if (metric) expect_shape("metric", *metric, {t, d, d});
  if (eigenvalues) expect_shape("eigenvalues", *eigenvalues, {t, d});
  qgml_model* mh = m.get();
  void* g = metric ? metric->data() : nullptr;
  void* ev = eigenvalues ? eigenvalues->data() : nullptr;
  check(call_released([&] { return qgml_quantum_metric(mh, x.data(), t, d, dtype_of<Real>(), g, ev); }));
}

template <class Real>
nb::tuple dimension(const Model& m, const Settings* s, const Points<Real>& x, std::optional<Out<int32_t>> per_point) {
  const auto [t, d] = points_shape<Real>(x);
  if (per_point) expect_shape("per_point", *per_point, {t});
  qgml_model* mh = m.get();
  const qgml_settings* sh = s ? s->get() : nullptr;
  int* pp = per_point ? per_point->data() : nullptr;
  int dim = 0, uncertain = 0;
  check(call_released([&] { return qgml_dimension(mh, sh, x.data(), t, d, dtype_of<Real>(), &dim, pp, &uncertain); }));
  return nb::make_tuple(dim, uncertain != 0);
}

// Supervised predictions into prediction (T, or T x C for several regression outputs), probability
// (classification: T for two classes with the logistic loss, T x K for softmax) and output (T, or T x C);
// returns the number of points without a prediction (NaN).
template <class Real>
int64_t predict(const Model& m, const std::string& supervised_json, const Points<Real>& x, Out<double> prediction,
                std::optional<Out<double>> probability, std::optional<Out<double>> output) {
  const auto [t, d] = points_shape<Real>(x);
  int features = 0, outputs = 0, classes = 0;
  check(qgml_supervised_shape(supervised_json.c_str(), &features, &outputs, &classes));
  const auto rows = [&](int64_t columns) {
    return columns == 1 ? std::vector<int64_t>{t} : std::vector<int64_t>{t, columns};
  };
  const auto expect = [&](const char* name, const Out<double>& a, const std::vector<int64_t>& shape) {
    if (shape.size() == 1)
      expect_shape(name, a, {shape[0]});
    else
      expect_shape(name, a, {shape[0], shape[1]});
  };
  expect("prediction", prediction, rows(classes > 0 ? 1 : outputs));
  if (probability) expect("probability", *probability, rows(classes > 0 && outputs > 1 ? classes : 1));
  if (output) expect("output", *output, rows(outputs));
  qgml_model* mh = m.get();
  double* pr = prediction.data();
  double* pp = probability ? probability->data() : nullptr;
  double* po = output ? output->data() : nullptr;
  int64_t failed = 0;
  check(call_released([&] {
    return qgml_predict(mh, supervised_json.c_str(), x.data(), t, d, dtype_of<Real>(), pr, pp, po, &failed);
  }));
  return failed;
}

// `qgml sample RUN_DIR --key value ...` in process; returns the sample directory.
std::string sample(const std::string& run_dir, const std::vector<std::string>& keys,
                   const std::vector<std::string>& values, bool quiet) {
  if (keys.size() != values.size()) bad_shape("sample: keys and values must have the same length");
  std::vector<const char*> k, v;
  for (const std::string& key : keys) k.push_back(key.c_str());
  for (const std::string& value : values) v.push_back(value.c_str());
  std::string out(run_dir.size() + 4096, '\0');
  for (const std::string& value : values) out.resize(std::max(out.size(), value.size() + 1), '\0');
  size_t needed = 0;
  check(call_released([&] {
    return qgml_sample(run_dir.c_str(), k.data(), v.data(), static_cast<int>(k.size()), quiet ? 1 : 0, out.data(),
                       out.size(), &needed);
  }));
  out.resize(needed > 0 ? needed - 1 : 0);
  return out;
}

// ---- matrix configurations ----

template <class Real>
Model* model_create(const In<std::complex<Real>, nb::ndim<3>>& a) {
  if (a.shape(1) != a.shape(2))
    bad_shape("matrices must have shape (D, N, N), got " + std::to_string(a.shape(0)) + " x " +
              std::to_string(a.shape(1)) + " x " + std::to_string(a.shape(2)));
  if (a.shape(0) > INT32_MAX || a.shape(1) > INT32_MAX) bad_shape("too many or too large matrices");
  qgml_model* out = nullptr;
  const int d = static_cast<int>(a.shape(0)), n = static_cast<int>(a.shape(1));
  check(call_released([&] { return qgml_model_create(d, n, a.data(), dtype_of<Real>(), &out); }));
  return new Model(out);
}

std::pair<int, int> model_shape(const Model& m) {
  int d = 0, n = 0;
  check(qgml_model_shape(m.get(), &d, &n));
  return {d, n};
}

template <class Real>
void model_matrices(const Model& m, Out<std::complex<Real>, nb::ndim<3>> out) {
  const auto [d, n] = model_shape(m);
  expect_shape("out", out, {d, n, n});
  check(qgml_model_matrices(m.get(), out.data(), dtype_of<Real>()));
}

}  // namespace

NB_MODULE(_qgml, mod) {
  mod.doc() = "qgml's C interface (qgml/c_api.h) for Python; the package qgml is its documented front end.";
  nb::set_leak_warnings(false);

  mod.def(
      "version", [] { return std::string(qgml_version()); }, "qgml's version, git revision and Kokkos backend.");
  mod.def(
      "initialize",
      [](int num_threads) {
        int started = 0;
        check(qgml_initialize(num_threads, &started));
        return started != 0;
      },
      "num_threads"_a = 0, "Starts Kokkos unless the process has already; True when this call started it.");
  mod.def(
      "finalize",
      [] {
        for (Handle* h : std::vector<Handle*>(Handle::registry().begin(), Handle::registry().end())) h->release();
        check(qgml_finalize());
      },
      "Destroys every live handle, then ends Kokkos if initialize() started it.");

  nb::class_<Settings>(mod, "Settings", "The program's settings (qgml --help): defaults, a YAML file, overrides.")
      .def(nb::init<>())
      .def(
          "load", [](Settings& s, const std::string& path) { check(qgml_settings_load(s.get(), path.c_str())); },
          "path"_a, "Reads a YAML config file as `qgml train FILE.yaml` does.")
      .def(
          "set",
          [](Settings& s, const std::string& key, const std::string& value) {
            check(qgml_settings_set(s.get(), key.c_str(), value.c_str()));
          },
          "key"_a, "value"_a, "Sets one setting (validated at once).")
      .def(
          "get",
          [](const Settings& s, const std::string& key) {
            return text([&](char* buf, size_t size, size_t* needed) {
              return qgml_settings_get(s.get(), key.c_str(), buf, size, needed);
            });
          },
          "key"_a, "The resolved value of a setting, as text.");

  nb::class_<Model>(mod, "Model", "D Hermitian N x N matrices in host memory.")
      .def_static("create", &model_create<double>, "matrices"_a.noconvert(), nb::rv_policy::take_ownership)
      .def_static("create", &model_create<float>, "matrices"_a.noconvert(), nb::rv_policy::take_ownership)
      .def_static("create", &model_create<double>, "matrices"_a, nb::rv_policy::take_ownership,
                  "Copies complex matrices of shape (D, N, N); checks Hermiticity.")
      .def_static(
          "load",
          [](const std::string& path) {
            qgml_model* out = nullptr;
            check(qgml_model_load(path.c_str(), &out));
            return new Model(out);
          },
          "path"_a, nb::rv_policy::take_ownership, "Reads an NPY file as the program writes it.")
      .def(
          "save",
          [](const Model& m, const std::string& path, bool single) {
            check(qgml_model_save(m.get(), path.c_str(), single ? QGML_FLOAT32 : QGML_FLOAT64));
          },
          "path"_a, "single"_a = false, "Writes an NPY file (complex128, or complex64 with single=True).")
      .def_prop_ro("shape", &model_shape, "(D, N)")
      .def("matrices", &model_matrices<double>, "out"_a.noconvert(), "Copies the matrices into out (D, N, N).")
      .def("matrices", &model_matrices<float>, "out"_a.noconvert());

  nb::class_<Run>(mod, "Run", "A run directory of `qgml train`.")
      .def_static(
          "open",
          [](const std::string& dir) {
            qgml_run* out = nullptr;
            check(qgml_run_open(dir.c_str(), &out));
            return new Run(out);
          },
          "run_dir"_a, nb::rv_policy::take_ownership)
      .def_prop_ro("directory",
                   [](const Run& r) {
                     return text([&](char* buf, size_t size, size_t* needed) {
                       return qgml_run_directory(r.get(), buf, size, needed);
                     });
                   })
      .def(
          "model",
          [](const Run& r) {
            qgml_model* out = nullptr;
            check(qgml_run_model(r.get(), &out));
            return new Model(out);
          },
          nb::rv_policy::take_ownership)
      .def(
          "history",
          [](const Run& r) {
            int epochs = 0;
            check(qgml_run_history(r.get(), &epochs, nullptr, nullptr, nullptr));
            std::vector<double> loss(epochs), rec(epochs), fluct(epochs);
            check(qgml_run_history(r.get(), &epochs, loss.data(), rec.data(), fluct.data()));
            return nb::make_tuple(owned_vector(std::move(loss)), owned_vector(std::move(rec)),
                                  owned_vector(std::move(fluct)));
          },
          "(loss, reconstruction, fluctuation) per epoch.")
      .def("dimension", [](const Run& r) {
        int dim = 0, uncertain = 0;
        check(qgml_run_dimension(r.get(), &dim, &uncertain));
        return nb::make_tuple(dim, uncertain != 0);
      });

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

  mod.def("evaluate", &evaluate<double>, "model"_a, "points"_a.noconvert(), "w"_a, "xbar"_a.noconvert().none(),
          "sigma2"_a.noconvert().none(), "energy"_a.noconvert().none());
  mod.def("evaluate", &evaluate<float>, "model"_a, "points"_a.noconvert(), "w"_a, "xbar"_a.noconvert().none(),
          "sigma2"_a.noconvert().none(), "energy"_a.noconvert().none(),
          "Per point xbar (T, D), sigma^2 (T), E_0 (T) into the given arrays; returns the loss.");
  mod.def("quantum_metric", &quantum_metric<double>, "model"_a, "points"_a.noconvert(), "metric"_a.noconvert().none(),
          "eigenvalues"_a.noconvert().none());
  mod.def("quantum_metric", &quantum_metric<float>, "model"_a, "points"_a.noconvert(), "metric"_a.noconvert().none(),
          "eigenvalues"_a.noconvert().none(), "The quantum metric (T, D, D) and its eigenvalues (T, D).");
  mod.def("dimension", &dimension<double>, "model"_a, "settings"_a.none(), "points"_a.noconvert(),
          "per_point"_a.noconvert().none());
  mod.def("dimension", &dimension<float>, "model"_a, "settings"_a.none(), "points"_a.noconvert(),
          "per_point"_a.noconvert().none(), "(dimension, uncertain); per-point estimates into per_point.");
  mod.def("predict", &predict<double>, "model"_a, "supervised_json"_a, "points"_a.noconvert(),
          "prediction"_a.noconvert(), "probability"_a.noconvert().none(), "output"_a.noconvert().none());
  mod.def("sample", &sample, "run_dir"_a, "keys"_a, "values"_a, "quiet"_a,
          "`qgml sample RUN_DIR --KEY VALUE ...` in process; returns the sample directory.");
  mod.def(
      "sample_resume",
      [](const std::string& dir, int64_t steps, bool quiet) {
        check(call_released([&] { return qgml_sample_resume(dir.c_str(), steps, quiet ? 1 : 0); }));
      },
      "sample_dir"_a, "steps"_a, "quiet"_a, "`qgml sample --resume DIR [--steps S]` in process.");
  mod.def("predict", &predict<float>, "model"_a, "supervised_json"_a, "points"_a.noconvert(),
          "prediction"_a.noconvert(), "probability"_a.noconvert().none(), "output"_a.noconvert().none());
  mod.def("predict", &predict<double>, "model"_a, "supervised_json"_a, "points"_a, "prediction"_a.noconvert(),
          "probability"_a.noconvert().none(), "output"_a.noconvert().none(),
          "Supervised predictions (T, or T x C outputs), class probabilities (T for two classes, T x K for "
          "softmax) and the outputs <psi_0|B_c|psi_0> (T, or T x C) into the given arrays; returns the number of "
          "points without a prediction.");
}
