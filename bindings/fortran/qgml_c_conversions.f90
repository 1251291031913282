! Internal to the Fortran module qgml: the conversions between a Fortran call's arguments and the C
! interface's, shared by the modules of bindings/fortran: Fortran strings to and from C strings and
! buffers, the QGML_ERROR_INVALID_ARGUMENT status and message of a wrongly shaped array, and the C values
! of the optional arguments quiet, stop and user_data. The module qgml does not export them.
module qgml_c_conversions
  use, intrinsic :: iso_c_binding
  use qgml_types, only: QGML_ERROR_INVALID_ARGUMENT, qgml_stop_callback
  use qgml_c_api, only: c_strlen, c_report_error
  implicit none
  private

  public :: from_c, to_c, extents, shape_error, text_of, stop_pointer, optional_pointer, quiet_flag

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

end module qgml_c_conversions
