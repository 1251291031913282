! Internal to the Fortran module qgml: the bind(C) interfaces of the C functions of qgml/c_api.h (named c_*,
! e.g. c_train for qgml_train) and of C's strlen, for the modules of bindings/fortran that call them. The
! module qgml does not export them: a Fortran program calls qgml's procedures, which check and convert
! their arguments.
module qgml_c_api
  use, intrinsic :: iso_c_binding
  implicit none
  private

  public :: c_strlen, c_last_error, c_version, c_initialize, c_finalize, c_report_error
  public :: c_settings_create, c_settings_load, c_settings_set, c_settings_get, c_settings_destroy
  public :: c_model_create, c_model_load, c_model_save, c_model_shape, c_model_matrices, c_model_destroy
  public :: c_train, c_resume, c_run_open, c_run_directory, c_run_model, c_run_history, c_run_dimension, &
            c_run_dimension_error, c_run_destroy, c_run_predict, c_run_supervised_shape
  public :: c_evaluate, c_quantum_metric, c_dimension

  interface
    function c_strlen(s) bind(C, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: c_strlen
    end function
    function c_last_error() bind(C, name="qgml_last_error")
      import :: c_ptr
      type(c_ptr) :: c_last_error
    end function
    function c_version() bind(C, name="qgml_version")
      import :: c_ptr
      type(c_ptr) :: c_version
    end function
    function c_initialize(num_threads, started) bind(C, name="qgml_initialize")
      import :: c_int
      integer(c_int), value :: num_threads
      integer(c_int) :: started
      integer(c_int) :: c_initialize
    end function
    function c_finalize() bind(C, name="qgml_finalize")
      import :: c_int
      integer(c_int) :: c_finalize
    end function
    function c_settings_create(out) bind(C, name="qgml_settings_create")
      import :: c_ptr, c_int
      type(c_ptr) :: out
      integer(c_int) :: c_settings_create
    end function
    function c_settings_load(s, path) bind(C, name="qgml_settings_load")
      import :: c_ptr, c_int, c_char
      type(c_ptr), value :: s
      character(kind=c_char) :: path(*)
      integer(c_int) :: c_settings_load
    end function
    function c_settings_set(s, key, value) bind(C, name="qgml_settings_set")
      import :: c_ptr, c_int, c_char
      type(c_ptr), value :: s
      character(kind=c_char) :: key(*), value(*)
      integer(c_int) :: c_settings_set
    end function
    function c_settings_get(s, key, buf, size, needed) bind(C, name="qgml_settings_get")
      import :: c_ptr, c_int, c_char, c_size_t
      type(c_ptr), value :: s, buf
      character(kind=c_char) :: key(*)
      integer(c_size_t), value :: size
      integer(c_size_t) :: needed
      integer(c_int) :: c_settings_get
    end function
    function c_settings_destroy(s) bind(C, name="qgml_settings_destroy")
      import :: c_ptr, c_int
      type(c_ptr), value :: s
      integer(c_int) :: c_settings_destroy
    end function
    function c_model_create(d, n, matrices, dtype, out) bind(C, name="qgml_model_create")
      import :: c_ptr, c_int
      integer(c_int), value :: d, n, dtype
      type(c_ptr), value :: matrices
      type(c_ptr) :: out
      integer(c_int) :: c_model_create
    end function
    function c_model_load(path, out) bind(C, name="qgml_model_load")
      import :: c_ptr, c_int, c_char
      character(kind=c_char) :: path(*)
      type(c_ptr) :: out
      integer(c_int) :: c_model_load
    end function
    function c_model_save(m, path, dtype) bind(C, name="qgml_model_save")
      import :: c_ptr, c_int, c_char
      type(c_ptr), value :: m
      character(kind=c_char) :: path(*)
      integer(c_int), value :: dtype
      integer(c_int) :: c_model_save
    end function
    function c_model_shape(m, d, n) bind(C, name="qgml_model_shape")
      import :: c_ptr, c_int
      type(c_ptr), value :: m
      integer(c_int) :: d, n
      integer(c_int) :: c_model_shape
    end function
    function c_model_matrices(m, out, dtype) bind(C, name="qgml_model_matrices")
      import :: c_ptr, c_int
      type(c_ptr), value :: m, out
      integer(c_int), value :: dtype
      integer(c_int) :: c_model_matrices
    end function
    function c_model_destroy(m) bind(C, name="qgml_model_destroy")
      import :: c_ptr, c_int
      type(c_ptr), value :: m
      integer(c_int) :: c_model_destroy
    end function
    function c_train(s, points, t, d, dtype, quiet, stop, user_data, out) bind(C, name="qgml_train")
      import :: c_ptr, c_int, c_int64_t, c_funptr
      type(c_ptr), value :: s, points, user_data
      integer(c_int64_t), value :: t
      integer(c_int), value :: d, dtype, quiet
      type(c_funptr), value :: stop
      type(c_ptr) :: out
      integer(c_int) :: c_train
    end function
    function c_resume(dir, points, t, d, dtype, quiet, stop, user_data, out) bind(C, name="qgml_resume")
      import :: c_ptr, c_int, c_int64_t, c_funptr, c_char
      character(kind=c_char) :: dir(*)
      type(c_ptr), value :: points, user_data
      integer(c_int64_t), value :: t
      integer(c_int), value :: d, dtype, quiet
      type(c_funptr), value :: stop
      type(c_ptr) :: out
      integer(c_int) :: c_resume
    end function
    function c_run_open(dir, out) bind(C, name="qgml_run_open")
      import :: c_ptr, c_int, c_char
      character(kind=c_char) :: dir(*)
      type(c_ptr) :: out
      integer(c_int) :: c_run_open
    end function
    function c_run_directory(r, buf, size, needed) bind(C, name="qgml_run_directory")
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: r, buf
      integer(c_size_t), value :: size
      integer(c_size_t) :: needed
      integer(c_int) :: c_run_directory
    end function
    function c_run_model(r, out) bind(C, name="qgml_run_model")
      import :: c_ptr, c_int
      type(c_ptr), value :: r
      type(c_ptr) :: out
      integer(c_int) :: c_run_model
    end function
    function c_run_history(r, epochs, loss, reconstruction, fluctuation) bind(C, name="qgml_run_history")
      import :: c_ptr, c_int
      type(c_ptr), value :: r, loss, reconstruction, fluctuation
      integer(c_int) :: epochs
      integer(c_int) :: c_run_history
    end function
    function c_run_dimension(r, dimension, uncertain) bind(C, name="qgml_run_dimension")
      import :: c_ptr, c_int
      type(c_ptr), value :: r
      integer(c_int) :: dimension, uncertain
      integer(c_int) :: c_run_dimension
    end function
    function c_run_dimension_error(r, error, low, high) bind(C, name="qgml_run_dimension_error")
      import :: c_ptr, c_int, c_double
      type(c_ptr), value :: r
      real(c_double) :: error
      integer(c_int) :: low, high
      integer(c_int) :: c_run_dimension_error
    end function
    function c_run_destroy(r) bind(C, name="qgml_run_destroy")
      import :: c_ptr, c_int
      type(c_ptr), value :: r
      integer(c_int) :: c_run_destroy
    end function
    function c_evaluate(m, points, t, d, dtype, w, xbar, sigma2, energy, loss) bind(C, name="qgml_evaluate")
      import :: c_ptr, c_int, c_int64_t, c_double
      type(c_ptr), value :: m, points, xbar, sigma2, energy, loss
      integer(c_int64_t), value :: t
      integer(c_int), value :: d, dtype
      real(c_double), value :: w
      integer(c_int) :: c_evaluate
    end function
    function c_quantum_metric(m, points, t, d, dtype, metric, eigenvalues) bind(C, name="qgml_quantum_metric")
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: m, points, metric, eigenvalues
      integer(c_int64_t), value :: t
      integer(c_int), value :: d, dtype
      integer(c_int) :: c_quantum_metric
    end function
    function c_dimension(m, s, points, t, d, dtype, dimension, per_point, uncertain) bind(C, name="qgml_dimension")
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: m, s, points, per_point, uncertain
      integer(c_int64_t), value :: t
      integer(c_int), value :: d, dtype
      integer(c_int) :: dimension
      integer(c_int) :: c_dimension
    end function
    function c_run_predict(r, points, t, d, dtype, prediction, probability, output, failed) &
      bind(C, name="qgml_run_predict")
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: r, points, prediction, probability, output, failed
      integer(c_int64_t), value :: t
      integer(c_int), value :: d, dtype
      integer(c_int) :: c_run_predict
    end function
    function c_run_supervised_shape(r, d, outputs, classes) bind(C, name="qgml_run_supervised_shape")
      import :: c_ptr, c_int
      type(c_ptr), value :: r
      integer(c_int), intent(out) :: d, outputs, classes
      integer(c_int) :: c_run_supervised_shape
    end function
    function c_report_error(status, message) bind(C, name="qgml_report_error")
      import :: c_int, c_char
      integer(c_int), value :: status
      character(kind=c_char), intent(in) :: message(*)
      integer(c_int) :: c_report_error
    end function
  end interface

end module qgml_c_api
