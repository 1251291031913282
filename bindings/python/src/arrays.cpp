// The shape errors of arrays: bad_shape() and shape_text().
#include "arrays.hpp"

namespace qgml_python {

[[noreturn]] void bad_shape(const std::string& message) { throw nb::value_error(("qgml: " + message).c_str()); }

std::string shape_text(size_t ndim, const int64_t* shape) {
  std::string s = "(";
  for (size_t i = 0; i < ndim; ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (ndim == 1 ? ",)" : ")");
}

}  // namespace qgml_python
