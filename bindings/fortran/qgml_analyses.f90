! A model's analyses on the caller's points x(D, T) through the Fortran module qgml (qgml.f90), which
! re-exports these generic interfaces, each for real(c_double) or real(c_float) points: qgml_evaluate (the
! point cloud xbar, the variances sigma2, the ground-state energies and the loss), qgml_quantum_metric (the
! metric and its eigenvalues) and qgml_dimension (the intrinsic dimension). The specific procedures stay
! private.
module qgml_analyses
  use, intrinsic :: iso_c_binding
  use qgml_types, only: QGML_FLOAT64, QGML_FLOAT32, qgml_settings_t, qgml_model_t
  use qgml_c_api, only: c_evaluate, c_quantum_metric, c_dimension
  use qgml_c_conversions, only: extents, shape_error
  implicit none
  private

  public :: qgml_evaluate, qgml_quantum_metric, qgml_dimension

  interface qgml_evaluate
    module procedure evaluate_double, evaluate_float
  end interface
  interface qgml_quantum_metric
    module procedure quantum_metric_double, quantum_metric_float
  end interface
  interface qgml_dimension
    module procedure dimension_double, dimension_float
  end interface

contains

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

end module qgml_analyses
