// The bindings of Kokkos's lifetime and qgml's version: version, initialize, finalize.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <string>
#include <vector>

#include "qgml/c_api.h"

#include "bindings.hpp"
#include "c_calls.hpp"
#include "handles.hpp"

using namespace nb::literals;

namespace qgml_python {

void bind_session(nb::module_& mod) {
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
}

}  // namespace qgml_python
