! The settings through the Fortran module qgml (qgml.f90), which re-exports these procedures: creating a
! qgml_settings_t with the defaults, loading a YAML file into it, setting and getting a key's value (as
! the program's keys, e.g. "model.N", in text) and destroying it.
module qgml_configuration
  use, intrinsic :: iso_c_binding
  use qgml_types, only: QGML_OK, qgml_settings_t
  use qgml_c_api, only: c_settings_create, c_settings_load, c_settings_set, c_settings_get, c_settings_destroy
  use qgml_c_conversions, only: to_c, text_of
  implicit none
  private

  public :: qgml_settings_create, qgml_settings_load, qgml_settings_set, qgml_settings_get, qgml_settings_destroy

contains

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

end module qgml_configuration
