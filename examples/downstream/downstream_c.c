/* The installed C interface (qgml::c): a settings round trip and the dimension of the spin-1/2 fuzzy
 * sphere at two points (docs/math.md 7: 2 at every x != 0). */
#include <stdio.h>

#include "qgml/c_api.h"

int main(void) {
  /* Pauli matrices / 2 (J_k for N = 2), interleaved (re, im), D x N x N row-major. */
  const double a[3][2][2][2] = {{{{0, 0}, {0.5, 0}}, {{0.5, 0}, {0, 0}}},
                                {{{0, 0}, {0, -0.5}}, {{0, 0.5}, {0, 0}}},
                                {{{0.5, 0}, {0, 0}}, {{0, 0}, {-0.5, 0}}}};
  const double x[2][3] = {{0.0, 0.6, 0.8}, {1.0, 0.0, 0.0}};
  qgml_model* m = NULL;
  int dimension = -1;
  if (qgml_initialize(0, NULL) != QGML_OK || qgml_model_create(3, 2, a, QGML_FLOAT64, &m) != QGML_OK ||
      qgml_dimension(m, NULL, x, 2, 3, QGML_FLOAT64, &dimension, NULL, NULL) != QGML_OK) {
    fprintf(stderr, "qgml: %s\n", qgml_last_error());
    return 1;
  }
  printf("%s: dimension %d\n", qgml_version(), dimension);
  qgml_model_destroy(m);
  qgml_finalize();
  return dimension == 2 ? 0 : 1;
}
