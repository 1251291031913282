// The error of a handle used after qgml.finalize() released it.
#include "handles.hpp"

#include <nanobind/nanobind.h>

namespace qgml_python {

[[noreturn]] void raise_released(const char* what) {
  PyErr_Format(PyExc_RuntimeError, "qgml: this %s was released by qgml.finalize()", what);
  throw nb::python_error();
}

}  // namespace qgml_python
