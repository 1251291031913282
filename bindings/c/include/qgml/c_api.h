/* qgml's C interface: plain C99, opaque handles, an error code from every call and the message of the
 * last failed call of the thread (qgml_last_error). The Fortran module (bindings/fortran) and the Python
 * package (bindings/python) are built on it.
 *
 * Arrays are the caller's, in host memory, row-major (C order):
 *   points      T x D reals (float64, or float32 where a call takes a qgml_dtype);
 *   matrices    D x N x N complex numbers as interleaved (re, im) pairs, the layout of NumPy's
 *               complex128 (complex64 for float) arrays of shape (D, N, N) and of Fortran's
 *               complex(c_double_complex) arrays of shape (N, N, D) (column-major, same bytes);
 *   outputs     written into caller-allocated arrays of the documented sizes.
 * Settings have the names of the program's YAML keys ("training.epochs", "model.N", ...; `qgml --help`
 * lists them); their values are text, validated like the program's (strict numbers, ranges, choices).
 *
 * Kokkos: the library never initialises Kokkos by itself. qgml_initialize starts it when the host process
 * has not (a Kokkos application that embeds qgml initialises it itself and calls nothing); qgml_finalize
 * ends it only when qgml_initialize started it. Every other call needs Kokkos initialised.
 *
 * Threads: the calls that compute (qgml_train, qgml_resume, qgml_evaluate, qgml_quantum_metric,
 * qgml_dimension, qgml_predict, qgml_run_predict, qgml_sample, qgml_sample_resume) run Kokkos kernels
 * and must come from the thread that initialised Kokkos, one at a time; with Kokkos 3's OpenMP backend a
 * call from another thread is refused with QGML_ERROR_RUNTIME (Kokkos itself would abort the process).
 * The other calls may come from any thread, each handle used by one thread at a time; qgml_last_error is
 * per thread.
 *
 * Handles: every handle returned is recorded until its destroy. A destroyed handle passed again (a
 * second destroy, a use after destroy), a pointer this library did not return, or a handle of another
 * type is refused with QGML_ERROR_INVALID_ARGUMENT and a message, as long as its address has not been
 * reused by a newer handle. Destroying NULL does nothing.
 */
#ifndef QGML_C_API_H
#define QGML_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes: 0 on success. */
typedef enum qgml_status {
  QGML_OK = 0,
  QGML_ERROR_INVALID_ARGUMENT = 1, /* a null handle or pointer, a bad size, an unknown setting or value */
  QGML_ERROR_IO = 2,               /* a file could not be read or written, or is not what it should be */
  QGML_ERROR_NUMERICAL = 3,        /* every point failed, or a result is not finite */
  QGML_ERROR_INTERRUPTED = 4,      /* training stopped by the stop callback (the run directory resumes) */
  QGML_ERROR_RUNTIME = 5,          /* anything else (out of memory, Kokkos not initialised, ...) */
} qgml_status;

typedef enum qgml_dtype { QGML_FLOAT64 = 0, QGML_FLOAT32 = 1 } qgml_dtype;

/* The message of the last failed call on this thread ("" when none); valid until the next call. */
const char* qgml_last_error(void);
/* For wrappers that check arguments before calling in (the Fortran module): records message as this
 * thread's last error and returns status (NULL message: ""). */
int qgml_report_error(int status, const char* message);
/* "MAJOR.MINOR.PATCH (git revision, Kokkos backend)". */
const char* qgml_version(void);

/* The most host threads qgml_initialize (and the program's --kokkos-threads) accepts: beyond it the
 * OpenMP runtime fails, and on failure ends the process. */
#define QGML_MAX_THREADS 1024

/* Starts Kokkos unless the process already has (num_threads <= 0: Kokkos' default; above
 * QGML_MAX_THREADS: QGML_ERROR_INVALID_ARGUMENT). *started is 1 when this call started it, 0 when it
 * was running already; may be NULL. The calling thread is then the one the computing calls run on. */
int qgml_initialize(int num_threads, int* started);
/* Ends Kokkos if qgml_initialize started it; a no-op otherwise. All handles must be destroyed first. */
int qgml_finalize(void);

/* ---- settings: the program's configuration (defaults, a YAML file, then overrides) ---- */
typedef struct qgml_settings qgml_settings;
int qgml_settings_create(qgml_settings** out);
/* Reads a YAML config file like `qgml train FILE.yaml` does; later qgml_settings_set calls override it. */
int qgml_settings_load(qgml_settings* s, const char* yaml_path);
/* Validates at once: an unknown key (with a suggestion) or a bad value is an error naming the key. */
int qgml_settings_set(qgml_settings* s, const char* key, const char* value);
/* The resolved value of key (the default where unset) into buf (size bytes, NUL-terminated); *needed
 * (may be NULL) gets the length + 1. QGML_ERROR_INVALID_ARGUMENT when buf is too small. */
int qgml_settings_get(const qgml_settings* s, const char* key, char* buf, size_t size, size_t* needed);
/* Every destroy: QGML_OK, or QGML_ERROR_INVALID_ARGUMENT for a handle that is not live (see Handles). */
int qgml_settings_destroy(qgml_settings* s);

/* ---- a matrix configuration: D Hermitian N x N matrices A_k, held in host memory ---- */
typedef struct qgml_model qgml_model;
/* Copies D*N*N complex numbers (interleaved re, im; dtype of the reals); checks Hermiticity to 1e-12
 * relative (1e-5 for float32). */
int qgml_model_create(int d, int n, const void* matrices, qgml_dtype dtype, qgml_model** out);
/* An NPY file as the program writes it (final_matrices.npy, model.load), complex64 or complex128. */
int qgml_model_load(const char* npy_path, qgml_model** out);
int qgml_model_save(const qgml_model* m, const char* npy_path, qgml_dtype dtype);
int qgml_model_shape(const qgml_model* m, int* d, int* n);
/* Copies the D*N*N complex entries out (interleaved re, im, dtype of the reals). */
int qgml_model_matrices(const qgml_model* m, void* out, qgml_dtype dtype);
int qgml_model_destroy(qgml_model* m);

/* ---- training: the program's `qgml train`, in process ---- */
typedef struct qgml_run qgml_run;
/* Polled between batches; a non-zero return stops training after the current batch, keeping the last
 * complete epoch (checkpointed), and the call returns QGML_ERROR_INTERRUPTED with *out set. */
typedef int (*qgml_stop_callback)(void* user_data);
/* Trains as `qgml train` with these settings: a run directory under output.directory with config.yaml,
 * checkpoints, history, final_matrices.npy and, with analysis.enabled, the dimension analysis; the same
 * loss history as the program for the same settings. points: T x D in host memory (dtype), or NULL to
 * take the data from the settings (data.file or data.generator); they are read during the call only
 * and must be finite: a NaN or inf (features, or the target column of a supervised task) is
 * QGML_ERROR_INVALID_ARGUMENT naming the array, features or targets, the row and the column.
 * `quiet` non-zero prints nothing on the terminal (log.txt in the run directory has it all). */
int qgml_train(const qgml_settings* s, const void* points, int64_t t, int d, qgml_dtype dtype, int quiet,
               qgml_stop_callback stop, void* user_data, qgml_run** out);
/* Continues a run directory (as `qgml train --resume RUN_DIR`); points as for qgml_train (the same
 * points the run trained on: the run's fingerprint is checked). */
int qgml_resume(const char* run_dir, const void* points, int64_t t, int d, qgml_dtype dtype, int quiet,
                qgml_stop_callback stop, void* user_data, qgml_run** out);
/* Opens a run directory written by `qgml train` or qgml_train. */
int qgml_run_open(const char* run_dir, qgml_run** out);
/* The run directory's path into buf, as qgml_settings_get. */
int qgml_run_directory(const qgml_run* r, char* buf, size_t size, size_t* needed);
/* The final (or, for an interrupted run, the last checkpointed) configuration; a new handle. */
int qgml_run_model(const qgml_run* r, qgml_model** out);
/* Epochs in the history, and the history: per epoch its total loss, reconstruction (mean d^2) and
 * fluctuation (mean sigma^2); each array `epochs` long, any may be NULL. */
int qgml_run_history(const qgml_run* r, int* epochs, double* loss, double* reconstruction, double* fluctuation);
/* The run's dimension estimate (analysis.enabled): the mode over its points and whether it is uncertain;
 * QGML_ERROR_IO when the run has no dimension_summary.json. */
int qgml_run_dimension(const qgml_run* r, int* dimension, int* uncertain);
/* The error bar of the run's estimate (as qgml_dimension_error); QGML_ERROR_IO when the run has no
 * dimension_summary.json or one written before error bars (no "error" field). Outputs may be NULL. */
int qgml_run_dimension_error(const qgml_run* r, double* error, int* low, int* high);
int qgml_run_destroy(qgml_run* r);

/* ---- analysis of a configuration on caller-owned points ---- */
/* Each takes finite points only: a NaN or infinite coordinate is QGML_ERROR_INVALID_ARGUMENT naming it.
 * An analysis whose team scratch or buffers cannot fit (e.g. D ~ 1000 with the packed kernel) is
 * QGML_ERROR_INVALID_ARGUMENT before any work, naming the kernel, N, D, the need, the limit and the
 * settings that fit (analysis.kernel, analysis.chunk; fewer points per call for the metric). */
/* Per point: the reconstruction xbar (T x D), sigma^2 (T) and E_0 (T); each output may be NULL. *loss
 * (may be NULL) gets mean(|x - xbar|^2 + w sigma^2) (docs/math.md 3). */
int qgml_evaluate(const qgml_model* m, const void* points, int64_t t, int d, qgml_dtype dtype, double w, void* xbar,
                  void* sigma2, void* energy, double* loss);
/* The quantum metric g(x) (docs/math.md 5.1) at each point: T x D x D reals into metric, its eigenvalues
 * (ascending, T x D) into eigenvalues; either may be NULL. */
int qgml_quantum_metric(const qgml_model* m, const void* points, int64_t t, int d, qgml_dtype dtype, void* metric,
                        void* eigenvalues);
/* The intrinsic dimension by the program's rule (analysis.* settings of s, or the defaults when s is
 * NULL): the mode over the points into *dimension, per point estimates (T ints) into per_point (may be
 * NULL), *uncertain as the program reports it (may be NULL). */
int qgml_dimension(const qgml_model* m, const qgml_settings* s, const void* points, int64_t t, int d, qgml_dtype dtype,
                   int* dimension, int* per_point, int* uncertain);
/* The same estimate with its error bar (docs/dimension.md, "Error bars"): the mode into *dimension, the
 * standard deviation of the mode over 200 bootstrap resamples of the points with neighbouring gap rules
 * into *error, and their 90 % interval into *low and *high; each output may be NULL. */
int qgml_dimension_error(const qgml_model* m, const qgml_settings* s, const void* points, int64_t t, int d,
                         qgml_dtype dtype, int* dimension, double* error, int* low, int* high);

/* ---- supervised prediction (docs/supervised.md, sections 1 and 11) ---- */
/* The shape of a supervised model from the text of its supervised.json: D features, C target operators
 * (outputs: one per regression output, 1 for two classes with the logistic loss, one per class for
 * softmax) and K classes (0 for regression); each output may be NULL. */
int qgml_supervised_shape(const char* supervised_json, int* d, int* outputs, int* classes);
/* The same for a run directory's supervised.json. */
int qgml_run_supervised_shape(const qgml_run* r, int* d, int* outputs, int* classes);
/* The predictions of a regression or classification model for T points of its D features, in the units
 * of the training data (the run standardised them; this applies the same transform); C and K as
 * qgml_supervised_shape gives them:
 *   prediction   regression: T x C doubles, the targets in their units; classification: T doubles, the
 *                predicted class (its label value: the positive class where P > 1/2, or the class of the
 *                largest probability);
 *   probability  classification (may be NULL; NULL for regression): two classes with the logistic loss,
 *                T doubles P(positive class) = sigmoid(<psi_0|B|psi_0>); softmax, T x K doubles P(class k);
 *   output       T x C doubles (may be NULL): the model's outputs <psi_0|B_c|psi_0> (the logits for
 *                classification, the standardised targets for regression);
 *   failed       (may be NULL) the number of points whose eigensolve failed: their outputs are NaN.
 * qgml_run_predict reads the run directory's supervised.json and its model (as qgml_run_model); a run
 * that is not supervised is QGML_ERROR_IO naming the file. */
int qgml_run_predict(const qgml_run* r, const void* points, int64_t t, int d, qgml_dtype dtype, double* prediction,
                     double* probability, double* output, int64_t* failed);
/* The same from a model of D + C matrices (A_1..A_D, then the target operators B_1..B_C) and the text of the
 * run's supervised.json (the transform and the classes), for callers that keep both in memory. */
int qgml_predict(const qgml_model* m, const char* supervised_json, const void* points, int64_t t, int d,
                 qgml_dtype dtype, double* prediction, double* probability, double* output, int64_t* failed);

/* ---- sampling (docs/math.md section 10): `qgml sample` in process ---- */
/* Draws from p(x) ~ exp(-beta E_0(x)) of a finished run directory, as `qgml sample RUN_DIR --KEY VALUE ...`
 * with the n options keys[i] = values[i] (the program's option names without "--": sampler (ula, mala,
 * hmc), chains, steps, warmup, thin, beta, init, step-size, leapfrog, target-acceptance, seed, out), each
 * validated as the program validates it. The sample directory (default RUN_DIR/samples-<sampler>) gets
 * sample.json (settings, automatic choices, step size, acceptance, split R-hat and ESS per coordinate),
 * samples.npy (draws x chains x D float64, in the data's coordinates), acceptance.npy (chains) and the
 * checkpoint state.npy; its path goes into buf (size bytes, checked before sampling: at least the length of
 * the out option plus 1, or of run_dir plus 14; *needed as qgml_settings_get), or nowhere when buf and
 * needed are NULL and size 0. Quiet non-zero: no progress lines. */
int qgml_sample(const char* run_dir, const char* const* keys, const char* const* values, int n, int quiet, char* buf,
                size_t size, size_t* needed);
/* Continues a sample directory exactly (`qgml sample --resume DIR`), to `steps` sampling steps in all
 * (steps <= 0: the number it was started with, finishing an interrupted sampling). */
int qgml_sample_resume(const char* sample_dir, int64_t steps, int quiet);

#ifdef __cplusplus
}
#endif

#endif /* QGML_C_API_H */
