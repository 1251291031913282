/* The intrinsic dimension of points on a sphere through qgml's C interface (qgml/c_api.h): the points are
 * made here, trained on in memory as `qgml train` would, and the run's dimension estimate is printed.
 *   estimate_dimension_c [OUTPUT_DIR]      (default: a directory under /tmp)
 * Build: link qgml::c (CMake: find_package(qgml), target_link_libraries(app PRIVATE qgml::c)). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "qgml/c_api.h"

#define CHECK(call)                                                             \
  do {                                                                          \
    int status_ = (call);                                                       \
    if (status_ != QGML_OK) {                                                   \
      fprintf(stderr, "%s failed (%d): %s\n", #call, status_, qgml_last_error()); \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

int main(int argc, char* argv[]) {
  const char* out_dir = argc > 1 ? argv[1] : "/tmp/qgml-example-c";
  enum { T = 400, D = 3 };
  static double x[T][D]; /* T x D, row-major */
  const double pi = 3.14159265358979323846, golden = pi * (3.0 - sqrt(5.0));
  for (int i = 0; i < T; ++i) { /* a Fibonacci lattice on the unit sphere */
    const double z = 1.0 - 2.0 * (i + 0.5) / T, r = sqrt(1.0 - z * z), phi = golden * i;
    x[i][0] = r * cos(phi);
    x[i][1] = r * sin(phi);
    x[i][2] = z;
  }

  int started = 0;
  CHECK(qgml_initialize(0, &started));
  qgml_settings* s = NULL;
  CHECK(qgml_settings_create(&s));
  CHECK(qgml_settings_set(s, "model.N", "3"));
  CHECK(qgml_settings_set(s, "training.epochs", "40"));
  CHECK(qgml_settings_set(s, "training.batch_size", "100"));
  CHECK(qgml_settings_set(s, "training.lr", "0.02"));
  CHECK(qgml_settings_set(s, "training.w", "0.25"));
  CHECK(qgml_settings_set(s, "output.directory", out_dir));
  CHECK(qgml_settings_set(s, "output.plots", "false"));

  qgml_run* run = NULL;
  CHECK(qgml_train(s, x, T, D, QGML_FLOAT64, 1, NULL, NULL, &run));
  int dimension = -1, uncertain = 0;
  CHECK(qgml_run_dimension(run, &dimension, &uncertain));
  printf("estimated intrinsic dimension: %d%s\n", dimension, uncertain ? " (uncertain)" : "");

  qgml_run_destroy(run);
  qgml_settings_destroy(s);
  CHECK(qgml_finalize());
  return dimension == 2 ? 0 : 1;
}
