// Pulls Kokkos' core objects (initialisation, thread-local state) into a shared library.
#include <Kokkos_Core.hpp>

bool qgml_kokkos_shared_link_check() {
  if (!Kokkos::is_initialized()) Kokkos::initialize();
  Kokkos::View<double*> v("qgml::kokkos_shared_link", 1);
  return v.extent(0) == 1;
}
