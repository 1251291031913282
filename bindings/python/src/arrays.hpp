// NumPy arrays in and out of the C interface: the array types of the calls, their dtypes, shape checks
// and 1-D arrays that own a std::vector.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "qgml/c_api.h"

namespace nb = nanobind;

namespace qgml_python {

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

[[noreturn]] void bad_shape(const std::string& message);

std::string shape_text(size_t ndim, const int64_t* shape);

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

}  // namespace qgml_python
