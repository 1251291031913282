// The bindings of the class Run: a run directory of `qgml train`, its model, history and dimension.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <string>
#include <utility>
#include <vector>

#include "qgml/c_api.h"

#include "arrays.hpp"
#include "bindings.hpp"
#include "c_calls.hpp"
#include "handles.hpp"

using namespace nb::literals;

namespace qgml_python {

void bind_run(nb::module_& mod) {
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
}

}  // namespace qgml_python
