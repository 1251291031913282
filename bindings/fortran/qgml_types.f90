! The public constants and handle types of the Fortran module qgml (qgml.f90), which re-exports them: the C
! statuses (QGML_OK = 0 and the QGML_ERROR_* codes of qgml/c_api.h), the element types QGML_FLOAT64 and
! QGML_FLOAT32, the handles qgml_settings_t, qgml_model_t and qgml_run_t (each a C pointer, NULL until a
! qgml call sets it) and the interface qgml_stop_callback of a training's stop test.
module qgml_types
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

end module qgml_types
