// The C status as a Python exception: raise() and check().
#include "c_calls.hpp"

namespace qgml_python {

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

void check(const Result& r) {
  if (r.status != QGML_OK) raise(r.status, r.message);
}

void check(int status) {
  if (status != QGML_OK) raise(status, qgml_last_error());
}

}  // namespace qgml_python
