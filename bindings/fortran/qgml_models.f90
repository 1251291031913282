! The models through the Fortran module qgml (qgml.f90), which re-exports these procedures: a
! qgml_model_t from the caller's matrices a(N, N, D) or from a .npy file, saving it, its shape (D, N), its
! matrices and destroying it.
module qgml_models
  use, intrinsic :: iso_c_binding
  use qgml_types, only: QGML_OK, QGML_FLOAT64, qgml_model_t
  use qgml_c_api, only: c_model_create, c_model_load, c_model_save, c_model_shape, c_model_matrices, &
                        c_model_destroy
  use qgml_c_conversions, only: to_c, shape_error
  implicit none
  private

  public :: qgml_model_create, qgml_model_load, qgml_model_save, qgml_model_shape, qgml_model_matrices, &
            qgml_model_destroy

contains

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

end module qgml_models
