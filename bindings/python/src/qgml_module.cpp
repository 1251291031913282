// qgml._qgml: the C interface (bindings/c/include/qgml/c_api.h) for Python, with nanobind. Arrays come
// in as NumPy arrays without a copy when they are C-contiguous and of the dtype of the call (float64 or
// float32 points, complex128 or complex64 matrices), converted otherwise; outputs are arrays the caller
// (the pure-Python layer, bindings/python/qgml) allocated. The GIL is released around every call that
// runs kernels. The pure-Python package documents the user-facing API; this module is its plumbing.
#include <nanobind/nanobind.h>

#include "bindings.hpp"

namespace nb = nanobind;

NB_MODULE(_qgml, mod) {
  mod.doc() = "qgml's C interface (qgml/c_api.h) for Python; the package qgml is its documented front end.";
  nb::set_leak_warnings(false);

  qgml_python::bind_session(mod);
  qgml_python::bind_settings(mod);
  qgml_python::bind_model(mod);
  qgml_python::bind_run(mod);
  qgml_python::bind_training(mod);
  qgml_python::bind_analysis(mod);
}
