// Calls of the C interface from Python: its status as a Python exception carrying the library's
// message, calls with the GIL released, and texts out of (buf, size, needed) calls.
#pragma once

#include <nanobind/nanobind.h>
#include <string>
#include <vector>

#include "qgml/c_api.h"

namespace nb = nanobind;

namespace qgml_python {

[[noreturn]] void raise(int status, const std::string& message);

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

void check(const Result& r);
void check(int status);

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

}  // namespace qgml_python
