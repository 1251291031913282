! The Fortran 2008 module on qgml's C interface (qgml/c_api.h), through ISO_C_BINDING.
!
! Every call is a function returning the C status (QGML_OK = 0); qgml_last_error() gives the message of the
! last failed call as a Fortran string. Handles are the derived types qgml_settings_t, qgml_model_t and
! qgml_run_t. Arrays are column-major views of the C layouts, without copies:
!   points    real(c_double) or real(c_float) x(D, T)       = C's T x D row-major array;
!   matrices  complex(c_double_complex) a(N, N, D)            = C's D x N x N array (A_k = a(:, :, k)
!             holds the transpose of A_k: for Hermitian A_k that is conj(A_k));
!   outputs   xbar(D, T), sigma2(T), energy(T), metric(D, D, T), eigenvalues(D, T), per_point(T).
!
! The module gathers the modules of bindings/fortran and exports their public names, and only those:
!   qgml_types          the constants QGML_*, the handle types and the interface qgml_stop_callback;
!   qgml_library        qgml_last_error, qgml_version, qgml_initialize, qgml_finalize;
!   qgml_configuration  qgml_settings_*;
!   qgml_models         qgml_model_*;
!   qgml_training       qgml_train, qgml_resume;
!   qgml_runs           qgml_run_*;
!   qgml_analyses       qgml_evaluate, qgml_quantum_metric, qgml_dimension;
! and, internal to them, qgml_c_api (the bind(C) interfaces) and qgml_c_conversions (argument conversions).
module qgml
  use qgml_types
  use qgml_library
  use qgml_configuration
  use qgml_models
  use qgml_training
  use qgml_runs
  use qgml_analyses
  implicit none
  private

  public :: QGML_OK, QGML_ERROR_INVALID_ARGUMENT, QGML_ERROR_IO, QGML_ERROR_NUMERICAL, QGML_ERROR_INTERRUPTED, &
            QGML_ERROR_RUNTIME
  public :: QGML_FLOAT64, QGML_FLOAT32
  public :: qgml_settings_t, qgml_model_t, qgml_run_t
  public :: qgml_stop_callback

  public :: qgml_last_error, qgml_version, qgml_initialize, qgml_finalize
  public :: qgml_settings_create, qgml_settings_load, qgml_settings_set, qgml_settings_get, qgml_settings_destroy
  public :: qgml_model_create, qgml_model_load, qgml_model_save, qgml_model_shape, qgml_model_matrices, &
            qgml_model_destroy
  public :: qgml_train, qgml_resume, qgml_run_open, qgml_run_directory, qgml_run_model, qgml_run_epochs, &
            qgml_run_history, qgml_run_dimension, qgml_run_dimension_error, qgml_run_destroy
  public :: qgml_evaluate, qgml_quantum_metric, qgml_dimension
  public :: qgml_run_predict, qgml_run_supervised_shape

end module qgml
