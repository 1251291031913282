! The Fortran 2008 module on qgml's C interface (qgml/c_api.h), through ISO_C_BINDING.
!
! Every call is a function returning the C status (QGML_OK = 0); qgml_last_error() gives the message of the
! last failed call as a Fortran string. Handles are the derived types qgml_settings_t, qgml_model_t and
! qgml_run_t. Arrays are column-major views of the C layouts, without copies:
!   points    real(c_double) or real(c_float) x(D, T)       = C's T x D row-major array;
!   matrices  complex(c_double_complex) a(N, N, D)            = C's D x N x N array (A_k = a(:, :, k)
!             holds the transpose of A_k: for Hermitian A_k that is conj(A_k));
!   outputs   xbar(D, T), sigma2(T), energy(T), metric(D, D, T), eigenvalues(D, T), per_point(T).
module qgml
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer(c_int), parameter, public :: QGML_OK = 0, QGML_ERROR_INVALID_ARGUMENT = 1, QGML_ERROR_IO = 2, &
                                       QGML_ERROR_NUMERICAL = 3, QGML_ERROR_INTERRUPTED = 4, QGML_ERROR_RUNTIME = 5
  integer(c_int), parameter, public :: QGML_FLOAT64 = 0, QGML_FLOAT32 = 1

  type, public :: qgml_settings_t
    type(c_ptr) :: ptr = c_null_ptr
  end type
  type, public :: qgml_model_t
    type(c_ptr) :: ptr = c_null_ptr
  end type
  type, public :: qgml_run_t
    type(c_ptr) :: ptr = c_null_ptr
  end type

  ! Polled between batches: a non-zero result stops training (qgml_train returns QGML_ERROR_INTERRUPTED).
  abstract interface
    function qgml_stop_callback(user_data) bind(C) result(stop)
      import :: c_ptr, c_int
      type(c_ptr), value :: user_data
      integer(c_int) :: stop
    end function
  end interface
  public :: qgml_stop_callback

  public :: qgml_last_error, qgml_version, qgml_initialize, qgml_finalize
  public :: qgml_settings_create, qgml_settings_load, qgml_settings_set, qgml_settings_get, qgml_settings_destroy
  public :: qgml_model_create, qgml_model_load, qgml_model_save, qgml_model_shape, qgml_model_matrices, &
            qgml_model_destroy
  public :: qgml_train, qgml_resume, qgml_run_open, qgml_run_directory, qgml_run_model, qgml_run_epochs, &
            qgml_run_history, qgml_run_dimension, qgml_run_dimension_error, qgml_run_destroy
  public :: qgml_evaluate, qgml_quantum_metric, qgml_dimension
  public :: qgml_run_predict, qgml_run_supervised_shape

  interface qgml_train
    module procedure train_double, train_float, train_settings_data
  end interface
  interface qgml_resume
    module procedure resume_double, resume_float, resume_no_points
  end interface
  interface qgml_evaluate
    module procedure evaluate_double, evaluate_float
  end interface
  interface qgml_quantum_metric
    module procedure quantum_metric_double, quantum_metric_float
  end interface
  interface qgml_dimension
    module procedure dimension_double, dimension_float
  end interface

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

contains

  ! ---- strings ----
  function from_c(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: n, i
    if (.not. c_associated(p)) then
      s = ""
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate (character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

  function to_c(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=:), allocatable :: c
    c = s//c_null_char
  end function

  ! "E1 x E2 x ..." for an array shape.
  function extents(e) result(text)
    integer, intent(in) :: e(:)
    character(len=:), allocatable :: text
    character(len=24) :: number
    integer :: i
    text = ""
    do i = 1, size(e)
      write (number, '(i0)') e(i)
      if (i > 1) text = text//" x "
      text = text//trim(number)
    end do
  end function

  ! QGML_ERROR_INVALID_ARGUMENT with "<function>: <what> (got E1 x E2 ...)" as the thread's last error, for
  ! the array shapes this module checks before calling in.
  function shape_error(function_name, what, got) result(status)
    character(len=*), intent(in) :: function_name, what
    integer, intent(in) :: got(:)
    integer :: status
    status = int(c_report_error(QGML_ERROR_INVALID_ARGUMENT, to_c(function_name//": "//what//" (got "// &
                                                                  extents(got)//")")))
  end function

  ! The text a C call writes into a buffer (qgml_settings_get, qgml_run_directory), as a Fortran string.
  function text_of(buf, needed) result(s)
    character(kind=c_char), intent(in) :: buf(:)
    integer(c_size_t), intent(in) :: needed
    character(len=:), allocatable :: s
    integer :: i
    allocate (character(len=int(needed) - 1) :: s)
    do i = 1, int(needed) - 1
      s(i:i) = buf(i)
    end do
  end function

  function stop_pointer(stop) result(f)
    procedure(qgml_stop_callback), optional :: stop
    type(c_funptr) :: f
    f = c_null_funptr
    if (present(stop)) f = c_funloc(stop)
  end function

  function optional_pointer(user_data) result(p)
    type(c_ptr), intent(in), optional :: user_data
    type(c_ptr) :: p
    p = c_null_ptr
    if (present(user_data)) p = user_data
  end function

  function quiet_flag(quiet) result(q)
    logical, intent(in), optional :: quiet
    integer(c_int) :: q
    q = 1
    if (present(quiet)) then
      if (.not. quiet) q = 0
    end if
  end function

  ! ---- errors, version, Kokkos ----
  function qgml_last_error() result(message)
    character(len=:), allocatable :: message
    message = from_c(c_last_error())
  end function

  function qgml_version() result(version)
    character(len=:), allocatable :: version
    version = from_c(c_version())
  end function

  ! Starts Kokkos unless the process has (num_threads <= 0 or absent: Kokkos' default); started: whether
  ! this call started it.
  function qgml_initialize(num_threads, started) result(status)
    integer, intent(in), optional :: num_threads
    logical, intent(out), optional :: started
    integer :: status
    integer(c_int) :: n, s
    n = 0
    if (present(num_threads)) n = int(num_threads, c_int)
    s = 0
    status = int(c_initialize(n, s))
    if (present(started)) started = s /= 0
  end function

  function qgml_finalize() result(status)
    integer :: status
    status = int(c_finalize())
  end function

  ! ---- settings ----
  function qgml_settings_create(s) result(status)
    type(qgml_settings_t), intent(out) :: s
    integer :: status
    status = int(c_settings_create(s%ptr))
  end function

  function qgml_settings_load(s, yaml_path) result(status)
    type(qgml_settings_t), intent(in) :: s
    character(len=*), intent(in) :: yaml_path
    integer :: status
    status = int(c_settings_load(s%ptr, to_c(yaml_path)))
  end function

  function qgml_settings_set(s, key, value) result(status)
    type(qgml_settings_t), intent(in) :: s
    character(len=*), intent(in) :: key, value
    integer :: status
    status = int(c_settings_set(s%ptr, to_c(key), to_c(value)))
  end function

  ! The resolved value of key (the default where unset).
  function qgml_settings_get(s, key, value) result(status)
    type(qgml_settings_t), intent(in) :: s
    character(len=*), intent(in) :: key
    character(len=:), allocatable, intent(out) :: value
    integer :: status
    integer(c_size_t) :: needed
    character(kind=c_char), allocatable, target :: buf(:)
    allocate (buf(256))
    needed = 0
    status = int(c_settings_get(s%ptr, to_c(key), c_loc(buf), size(buf, kind=c_size_t), needed))
    if (status /= QGML_OK .and. needed > size(buf, kind=c_size_t)) then
      deallocate (buf)
      allocate (buf(needed))
      status = int(c_settings_get(s%ptr, to_c(key), c_loc(buf), size(buf, kind=c_size_t), needed))
    end if
    value = ""
    if (status == QGML_OK) value = text_of(buf, needed)
  end function

  subroutine qgml_settings_destroy(s)
    type(qgml_settings_t), intent(inout) :: s
    integer(c_int) :: status
    ! The pointer is nulled below, so a second destroy passes NULL: the status is always QGML_OK here.
    status = c_settings_destroy(s%ptr)
    s%ptr = c_null_ptr
  end subroutine

  ! ---- models ----
  function qgml_model_create(a, m) result(status)
    complex(c_double_complex), intent(in), target, contiguous :: a(:, :, :)
    type(qgml_model_t), intent(out) :: m
    integer :: status
    if (size(a, 1) /= size(a, 2)) then
      status = shape_error("qgml_model_create", "a must be N x N x D, its first two extents equal", shape(a))
      return
    end if
    status = int(c_model_create(int(size(a, 3), c_int), int(size(a, 1), c_int), c_loc(a), QGML_FLOAT64, m%ptr))
  end function

  function qgml_model_load(npy_path, m) result(status)
    character(len=*), intent(in) :: npy_path
    type(qgml_model_t), intent(out) :: m
    integer :: status
    status = int(c_model_load(to_c(npy_path), m%ptr))
  end function

  ! dtype: QGML_FLOAT64 (complex128, the default) or QGML_FLOAT32 (complex64).
  function qgml_model_save(m, npy_path, dtype) result(status)
    type(qgml_model_t), intent(in) :: m
    character(len=*), intent(in) :: npy_path
    integer, intent(in), optional :: dtype
    integer :: status
    integer(c_int) :: t
    t = QGML_FLOAT64
    if (present(dtype)) t = int(dtype, c_int)
    status = int(c_model_save(m%ptr, to_c(npy_path), t))
  end function

  function qgml_model_shape(m, d, n) result(status)
    type(qgml_model_t), intent(in) :: m
    integer, intent(out) :: d, n
    integer :: status
    integer(c_int) :: cd, cn
    cd = 0
    cn = 0
    status = int(c_model_shape(m%ptr, cd, cn))
    d = int(cd)
    n = int(cn)
  end function

  ! The matrices into a(N, N, D), allocated here.
  function qgml_model_matrices(m, a) result(status)
    type(qgml_model_t), intent(in) :: m
    complex(c_double_complex), allocatable, target, intent(out) :: a(:, :, :)
    integer :: status
    integer :: d, n
    status = qgml_model_shape(m, d, n)
    if (status /= QGML_OK) return
    allocate (a(n, n, d))
    status = int(c_model_matrices(m%ptr, c_loc(a), QGML_FLOAT64))
  end function

  subroutine qgml_model_destroy(m)
    type(qgml_model_t), intent(inout) :: m
    integer(c_int) :: status
    ! The pointer is nulled below, so a second destroy passes NULL: the status is always QGML_OK here.
    status = c_model_destroy(m%ptr)
    m%ptr = c_null_ptr
  end subroutine

  ! ---- training ----
  ! qgml_train(settings, x, run [, quiet, stop, user_data]): x(D, T) in memory, or no x (data from the
  ! settings). quiet defaults to .true.
  function train_double(s, x, r, quiet, stop, user_data) result(status)
    type(qgml_settings_t), intent(in) :: s
    real(c_double), intent(in), target, contiguous :: x(:, :)
    type(qgml_run_t), intent(out) :: r
    logical, intent(in), optional :: quiet
    procedure(qgml_stop_callback), optional :: stop
    type(c_ptr), intent(in), optional :: user_data
    integer :: status
    status = int(c_train(s%ptr, c_loc(x), size(x, 2, kind=c_int64_t), int(size(x, 1), c_int), QGML_FLOAT64, &
                         quiet_flag(quiet), stop_pointer(stop), optional_pointer(user_data), r%ptr))
  end function

  function train_float(s, x, r, quiet, stop, user_data) result(status)
    type(qgml_settings_t), intent(in) :: s
    real(c_float), intent(in), target, contiguous :: x(:, :)
    type(qgml_run_t), intent(out) :: r
    logical, intent(in), optional :: quiet
    procedure(qgml_stop_callback), optional :: stop
    type(c_ptr), intent(in), optional :: user_data
    integer :: status
    status = int(c_train(s%ptr, c_loc(x), size(x, 2, kind=c_int64_t), int(size(x, 1), c_int), QGML_FLOAT32, &
                         quiet_flag(quiet), stop_pointer(stop), optional_pointer(user_data), r%ptr))
  end function

  function train_settings_data(s, r, quiet, stop, user_data) result(status)
    type(qgml_settings_t), intent(in) :: s
    type(qgml_run_t), intent(out) :: r
    logical, intent(in), optional :: quiet
    procedure(qgml_stop_callback), optional :: stop
    type(c_ptr), intent(in), optional :: user_data
    integer :: status
    status = int(c_train(s%ptr, c_null_ptr, 0_c_int64_t, 0_c_int, QGML_FLOAT64, quiet_flag(quiet), &
                         stop_pointer(stop), optional_pointer(user_data), r%ptr))
  end function

  function resume_double(run_dir, x, r, quiet, stop, user_data) result(status)
    character(len=*), intent(in) :: run_dir
    real(c_double), intent(in), target, contiguous :: x(:, :)
    type(qgml_run_t), intent(out) :: r
    logical, intent(in), optional :: quiet
    procedure(qgml_stop_callback), optional :: stop
    type(c_ptr), intent(in), optional :: user_data
    integer :: status
    status = int(c_resume(to_c(run_dir), c_loc(x), size(x, 2, kind=c_int64_t), int(size(x, 1), c_int), &
                          QGML_FLOAT64, quiet_flag(quiet), stop_pointer(stop), optional_pointer(user_data), r%ptr))
  end function

  function resume_float(run_dir, x, r, quiet, stop, user_data) result(status)
    character(len=*), intent(in) :: run_dir
    real(c_float), intent(in), target, contiguous :: x(:, :)
    type(qgml_run_t), intent(out) :: r
    logical, intent(in), optional :: quiet
    procedure(qgml_stop_callback), optional :: stop
    type(c_ptr), intent(in), optional :: user_data
    integer :: status
    status = int(c_resume(to_c(run_dir), c_loc(x), size(x, 2, kind=c_int64_t), int(size(x, 1), c_int), &
                          QGML_FLOAT32, quiet_flag(quiet), stop_pointer(stop), optional_pointer(user_data), r%ptr))
  end function

  function resume_no_points(run_dir, r, quiet, stop, user_data) result(status)
    character(len=*), intent(in) :: run_dir
    type(qgml_run_t), intent(out) :: r
    logical, intent(in), optional :: quiet
    procedure(qgml_stop_callback), optional :: stop
    type(c_ptr), intent(in), optional :: user_data
    integer :: status
    status = int(c_resume(to_c(run_dir), c_null_ptr, 0_c_int64_t, 0_c_int, QGML_FLOAT64, quiet_flag(quiet), &
                          stop_pointer(stop), optional_pointer(user_data), r%ptr))
  end function

  function qgml_run_open(run_dir, r) result(status)
    character(len=*), intent(in) :: run_dir
    type(qgml_run_t), intent(out) :: r
    integer :: status
    status = int(c_run_open(to_c(run_dir), r%ptr))
  end function

  function qgml_run_directory(r, dir) result(status)
    type(qgml_run_t), intent(in) :: r
    character(len=:), allocatable, intent(out) :: dir
    integer :: status
    integer(c_size_t) :: needed
    character(kind=c_char), allocatable, target :: buf(:)
    allocate (buf(4096))
    needed = 0
    status = int(c_run_directory(r%ptr, c_loc(buf), size(buf, kind=c_size_t), needed))
    if (status /= QGML_OK .and. needed > size(buf, kind=c_size_t)) then
      deallocate (buf)
      allocate (buf(needed))
      status = int(c_run_directory(r%ptr, c_loc(buf), size(buf, kind=c_size_t), needed))
    end if
    dir = ""
    if (status == QGML_OK) dir = text_of(buf, needed)
  end function

  function qgml_run_model(r, m) result(status)
    type(qgml_run_t), intent(in) :: r
    type(qgml_model_t), intent(out) :: m
    integer :: status
    status = int(c_run_model(r%ptr, m%ptr))
  end function

  function qgml_run_epochs(r, epochs) result(status)
    type(qgml_run_t), intent(in) :: r
    integer, intent(out) :: epochs
    integer :: status
    integer(c_int) :: e
    e = 0
    status = int(c_run_history(r%ptr, e, c_null_ptr, c_null_ptr, c_null_ptr))
    epochs = int(e)
  end function

  ! The per-epoch total loss, reconstruction and fluctuation, allocated here.
  function qgml_run_history(r, loss, reconstruction, fluctuation) result(status)
    type(qgml_run_t), intent(in) :: r
    real(c_double), allocatable, target, intent(out) :: loss(:)
    real(c_double), allocatable, target, intent(out), optional :: reconstruction(:), fluctuation(:)
    integer :: status
    integer :: epochs
    type(c_ptr) :: pr, pf
    status = qgml_run_epochs(r, epochs)
    if (status /= QGML_OK) return
    allocate (loss(epochs))
    pr = c_null_ptr
    pf = c_null_ptr
    if (present(reconstruction)) then
      allocate (reconstruction(epochs))
      pr = c_loc(reconstruction)
    end if
    if (present(fluctuation)) then
      allocate (fluctuation(epochs))
      pf = c_loc(fluctuation)
    end if
    block
      integer(c_int) :: e
      status = int(c_run_history(r%ptr, e, c_loc(loss), pr, pf))
    end block
  end function

  function qgml_run_dimension(r, dimension, uncertain) result(status)
    type(qgml_run_t), intent(in) :: r
    integer, intent(out) :: dimension
    logical, intent(out), optional :: uncertain
    integer :: status
    integer(c_int) :: d, u
    d = -1
    u = 0
    status = int(c_run_dimension(r%ptr, d, u))
    dimension = int(d)
    if (present(uncertain)) uncertain = u /= 0
  end function

  ! The error bar of the run's estimate (docs/dimension.md, "Error bars"): the standard deviation of the
  ! mode over bootstrap resamples with neighbouring gap rules, and its 90 % interval [low, high].
  function qgml_run_dimension_error(r, error, low, high) result(status)
    type(qgml_run_t), intent(in) :: r
    real(c_double), intent(out) :: error
    integer, intent(out) :: low, high
    integer :: status
    integer(c_int) :: lo, hi
    real(c_double) :: e
    e = -1
    lo = -1
    hi = -1
    status = int(c_run_dimension_error(r%ptr, e, lo, hi))
    error = e
    low = int(lo)
    high = int(hi)
  end function

  subroutine qgml_run_destroy(r)
    type(qgml_run_t), intent(inout) :: r
    integer(c_int) :: status
    ! The pointer is nulled below, so a second destroy passes NULL: the status is always QGML_OK here.
    status = c_run_destroy(r%ptr)
    r%ptr = c_null_ptr
  end subroutine

  ! The shape of a supervised run's model: D features, C target operators (outputs) and K classes (0 for
  ! regression), as qgml_run_supervised_shape of the C interface.
  function qgml_run_supervised_shape(r, d, outputs, classes) result(status)
    type(qgml_run_t), intent(in) :: r
    integer, intent(out) :: d, outputs, classes
    integer :: status
    integer(c_int) :: cd, co, ck
    status = int(c_run_supervised_shape(r%ptr, cd, co, ck))
    d = int(cd)
    outputs = int(co)
    classes = int(ck)
  end function

  ! The predictions of a regression or classification run at the points x(D, T), in the training data's
  ! units (docs/supervised.md, sections 1 and 11), with C outputs and K classes as
  ! qgml_run_supervised_shape gives them: prediction(C * T) the targets (output c of point t at
  ! c + C (t - 1)), or prediction(T) the class's label value; probability(T) P(positive class) for two
  ! classes, probability(K * T) P(class k) for softmax (classification only); output(C * T)
  ! <psi_0|B_c|psi_0>; failed the points without a prediction (NaN).
  function qgml_run_predict(r, x, prediction, probability, output, failed) result(status)
    type(qgml_run_t), intent(in) :: r
    real(c_double), intent(in), target, contiguous :: x(:, :)
    real(c_double), intent(out), target, contiguous :: prediction(:)
    real(c_double), intent(out), target, contiguous, optional :: probability(:), output(:)
    integer(c_int64_t), intent(out), target, optional :: failed
    integer :: status, d, outputs, classes, per_point
    type(c_ptr) :: pp, po, pf
    pp = c_null_ptr
    po = c_null_ptr
    pf = c_null_ptr
    status = qgml_run_supervised_shape(r, d, outputs, classes)
    if (status /= QGML_OK) return
    per_point = outputs
    if (classes > 0) per_point = 1
    if (size(prediction) /= per_point * size(x, 2)) then
      status = shape_error("qgml_run_predict", "prediction must have "//extents([per_point])//" x T = "// &
                           extents([per_point * size(x, 2)])//" entries", shape(prediction))
      return
    end if
    if (present(probability)) then
      per_point = 1
      if (outputs > 1) per_point = classes
      if (size(probability) /= per_point * size(x, 2)) then
        status = shape_error("qgml_run_predict", "probability must have "//extents([per_point])//" x T = "// &
                             extents([per_point * size(x, 2)])//" entries", shape(probability))
        return
      end if
      pp = c_loc(probability)
    end if
    if (present(output)) then
      if (size(output) /= outputs * size(x, 2)) then
        status = shape_error("qgml_run_predict", "output must have C x T = "//extents([outputs * size(x, 2)])// &
                             " entries", shape(output))
        return
      end if
      po = c_loc(output)
    end if
    if (present(failed)) pf = c_loc(failed)
    status = int(c_run_predict(r%ptr, c_loc(x), size(x, 2, kind=c_int64_t), int(size(x, 1), c_int), QGML_FLOAT64, &
                               c_loc(prediction), pp, po, pf))
  end function

  ! ---- analyses on the caller's points x(D, T) ----
  function evaluate_double(m, x, w, xbar, sigma2, energy, loss) result(status)
    type(qgml_model_t), intent(in) :: m
    real(c_double), intent(in), target, contiguous :: x(:, :)
    real(c_double), intent(in) :: w
    real(c_double), intent(out), target, contiguous, optional :: xbar(:, :), sigma2(:), energy(:)
    real(c_double), intent(out), target, optional :: loss
    integer :: status
    type(c_ptr) :: px, ps, pe, pl
    px = c_null_ptr
    ps = c_null_ptr
    pe = c_null_ptr
    pl = c_null_ptr
    if (present(xbar)) then
      if (any(shape(xbar) /= shape(x))) then
        status = shape_error("qgml_evaluate", "xbar must have the shape of x, D x T = "//extents(shape(x)), &
                             shape(xbar))
        return
      end if
      px = c_loc(xbar)
    end if
    if (present(sigma2)) then
      if (size(sigma2) /= size(x, 2)) then
        status = shape_error("qgml_evaluate", "sigma2 must have T = size(x, 2) = "//extents([size(x, 2)])//" entries", &
                             shape(sigma2))
        return
      end if
      ps = c_loc(sigma2)
    end if
    if (present(energy)) then
      if (size(energy) /= size(x, 2)) then
        status = shape_error("qgml_evaluate", "energy must have T = size(x, 2) = "//extents([size(x, 2)])//" entries", &
                             shape(energy))
        return
      end if
      pe = c_loc(energy)
    end if
    if (present(loss)) pl = c_loc(loss)
    status = int(c_evaluate(m%ptr, c_loc(x), size(x, 2, kind=c_int64_t), int(size(x, 1), c_int), QGML_FLOAT64, &
                            w, px, ps, pe, pl))
  end function

  function evaluate_float(m, x, w, xbar, sigma2, energy, loss) result(status)
    type(qgml_model_t), intent(in) :: m
    real(c_float), intent(in), target, contiguous :: x(:, :)
    real(c_double), intent(in) :: w
    real(c_float), intent(out), target, contiguous, optional :: xbar(:, :), sigma2(:), energy(:)
    real(c_double), intent(out), target, optional :: loss
    integer :: status
    type(c_ptr) :: px, ps, pe, pl
    px = c_null_ptr
    ps = c_null_ptr
    pe = c_null_ptr
    pl = c_null_ptr
    if (present(xbar)) then
      if (any(shape(xbar) /= shape(x))) then
        status = shape_error("qgml_evaluate", "xbar must have the shape of x, D x T = "//extents(shape(x)), &
                             shape(xbar))
        return
      end if
      px = c_loc(xbar)
    end if
    if (present(sigma2)) then
      if (size(sigma2) /= size(x, 2)) then
        status = shape_error("qgml_evaluate", "sigma2 must have T = size(x, 2) = "//extents([size(x, 2)])//" entries", &
                             shape(sigma2))
        return
      end if
      ps = c_loc(sigma2)
    end if
    if (present(energy)) then
      if (size(energy) /= size(x, 2)) then
        status = shape_error("qgml_evaluate", "energy must have T = size(x, 2) = "//extents([size(x, 2)])//" entries", &
                             shape(energy))
        return
      end if
      pe = c_loc(energy)
    end if
    if (present(loss)) pl = c_loc(loss)
    status = int(c_evaluate(m%ptr, c_loc(x), size(x, 2, kind=c_int64_t), int(size(x, 1), c_int), QGML_FLOAT32, &
                            w, px, ps, pe, pl))
  end function

  ! metric(D, D, T) and eigenvalues(D, T) (ascending); either may be absent.
  function quantum_metric_double(m, x, metric, eigenvalues) result(status)
    type(qgml_model_t), intent(in) :: m
    real(c_double), intent(in), target, contiguous :: x(:, :)
    real(c_double), intent(out), target, contiguous, optional :: metric(:, :, :), eigenvalues(:, :)
    integer :: status
    type(c_ptr) :: pm, pe
    pm = c_null_ptr
    pe = c_null_ptr
    if (present(metric)) then
      if (size(metric, 1) /= size(x, 1) .or. size(metric, 2) /= size(x, 1) .or. size(metric, 3) /= size(x, 2)) then
        status = shape_error("qgml_quantum_metric", "metric must be D x D x T = "// &
                             extents([size(x, 1), size(x, 1), size(x, 2)]), shape(metric))
        return
      end if
      pm = c_loc(metric)
    end if
    if (present(eigenvalues)) then
      if (any(shape(eigenvalues) /= shape(x))) then
        status = shape_error("qgml_quantum_metric", "eigenvalues must have the shape of x, D x T = "// &
                             extents(shape(x)), shape(eigenvalues))
        return
      end if
      pe = c_loc(eigenvalues)
    end if
    status = int(c_quantum_metric(m%ptr, c_loc(x), size(x, 2, kind=c_int64_t), int(size(x, 1), c_int), &
                                  QGML_FLOAT64, pm, pe))
  end function

  function quantum_metric_float(m, x, metric, eigenvalues) result(status)
    type(qgml_model_t), intent(in) :: m
    real(c_float), intent(in), target, contiguous :: x(:, :)
    real(c_float), intent(out), target, contiguous, optional :: metric(:, :, :), eigenvalues(:, :)
    integer :: status
    type(c_ptr) :: pm, pe
    pm = c_null_ptr
    pe = c_null_ptr
    if (present(metric)) then
      if (size(metric, 1) /= size(x, 1) .or. size(metric, 2) /= size(x, 1) .or. size(metric, 3) /= size(x, 2)) then
        status = shape_error("qgml_quantum_metric", "metric must be D x D x T = "// &
                             extents([size(x, 1), size(x, 1), size(x, 2)]), shape(metric))
        return
      end if
      pm = c_loc(metric)
    end if
    if (present(eigenvalues)) then
      if (any(shape(eigenvalues) /= shape(x))) then
        status = shape_error("qgml_quantum_metric", "eigenvalues must have the shape of x, D x T = "// &
                             extents(shape(x)), shape(eigenvalues))
        return
      end if
      pe = c_loc(eigenvalues)
    end if
    status = int(c_quantum_metric(m%ptr, c_loc(x), size(x, 2, kind=c_int64_t), int(size(x, 1), c_int), &
                                  QGML_FLOAT32, pm, pe))
  end function

  ! The intrinsic dimension by the program's rule (the analysis.* settings of s, or the defaults).
  function dimension_double(m, x, dimension, per_point, uncertain, s) result(status)
    type(qgml_model_t), intent(in) :: m
    real(c_double), intent(in), target, contiguous :: x(:, :)
    integer, intent(out) :: dimension
    integer(c_int), intent(out), target, contiguous, optional :: per_point(:)
    logical, intent(out), optional :: uncertain
    type(qgml_settings_t), intent(in), optional :: s
    integer :: status
    status = dimension_of(m, c_loc(x), size(x, 2, kind=c_int64_t), int(size(x, 1), c_int), QGML_FLOAT64, &
                          dimension, per_point, uncertain, s)
  end function

  function dimension_float(m, x, dimension, per_point, uncertain, s) result(status)
    type(qgml_model_t), intent(in) :: m
    real(c_float), intent(in), target, contiguous :: x(:, :)
    integer, intent(out) :: dimension
    integer(c_int), intent(out), target, contiguous, optional :: per_point(:)
    logical, intent(out), optional :: uncertain
    type(qgml_settings_t), intent(in), optional :: s
    integer :: status
    status = dimension_of(m, c_loc(x), size(x, 2, kind=c_int64_t), int(size(x, 1), c_int), QGML_FLOAT32, &
                          dimension, per_point, uncertain, s)
  end function

  function dimension_of(m, px, t, d, dtype, dimension, per_point, uncertain, s) result(status)
    type(qgml_model_t), intent(in) :: m
    type(c_ptr), intent(in) :: px
    integer(c_int64_t), intent(in) :: t
    integer(c_int), intent(in) :: d, dtype
    integer, intent(out) :: dimension
    integer(c_int), intent(out), target, contiguous, optional :: per_point(:)
    logical, intent(out), optional :: uncertain
    type(qgml_settings_t), intent(in), optional :: s
    integer :: status
    integer(c_int), target :: dim, unc
    type(c_ptr) :: pp, ps
    pp = c_null_ptr
    ps = c_null_ptr
    if (present(per_point)) then
      if (size(per_point, kind=c_int64_t) /= t) then
        status = shape_error("qgml_dimension", "per_point must have T = size(x, 2) entries", shape(per_point))
        return
      end if
      pp = c_loc(per_point)
    end if
    if (present(s)) ps = s%ptr
    dim = -1
    unc = 0
    status = int(c_dimension(m%ptr, ps, px, t, d, dtype, dim, pp, c_loc(unc)))
    dimension = int(dim)
    if (present(uncertain)) uncertain = unc /= 0
  end function

end module qgml
