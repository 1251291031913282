// The bindings of the class Model: matrix configurations, created from, loaded into and copied to
// NumPy arrays.
#include <complex>
#include <cstdint>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
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

void bind_model(nb::module_& mod) {
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
}

}  // namespace qgml_python
