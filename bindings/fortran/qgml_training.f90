! Training through the Fortran module qgml (qgml.f90), which re-exports these generic interfaces: qgml_train
! (a new run from settings, on points x(D, T) in real(c_double) or real(c_float), or on the settings' data)
! and qgml_resume (a run directory's training continued, on such points or without points); each gives a
! qgml_run_t. The specific procedures stay private.
module qgml_training
  use, intrinsic :: iso_c_binding
  use qgml_types, only: QGML_FLOAT64, QGML_FLOAT32, qgml_settings_t, qgml_run_t, qgml_stop_callback
  use qgml_c_api, only: c_train, c_resume
  use qgml_c_conversions, only: to_c, stop_pointer, optional_pointer, quiet_flag
  implicit none
  private

  public :: qgml_train, qgml_resume

  interface qgml_train
    module procedure train_double, train_float, train_settings_data
  end interface
  interface qgml_resume
    module procedure resume_double, resume_float, resume_no_points
  end interface

contains

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

end module qgml_training
