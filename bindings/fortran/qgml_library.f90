! The library's state through the Fortran module qgml (qgml.f90), which re-exports these procedures: the
! message of the last failed call (qgml_last_error), the version (qgml_version), and starting and ending
! Kokkos (qgml_initialize, qgml_finalize).
module qgml_library
  use, intrinsic :: iso_c_binding
  use qgml_c_api, only: c_last_error, c_version, c_initialize, c_finalize
  use qgml_c_conversions, only: from_c
  implicit none
  private

  public :: qgml_last_error, qgml_version, qgml_initialize, qgml_finalize

contains

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

end module qgml_library
