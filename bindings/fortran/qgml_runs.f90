! The runs through the Fortran module qgml (qgml.f90), which re-exports these procedures: opening a run
! directory as a qgml_run_t, its directory, model, epochs and per-epoch losses, its intrinsic dimension
! estimate and error bar, a supervised run's shape and predictions at the caller's points, and destroying
! it.
module qgml_runs
  use, intrinsic :: iso_c_binding
  use qgml_types, only: QGML_OK, QGML_FLOAT64, qgml_model_t, qgml_run_t
  use qgml_c_api, only: c_run_open, c_run_directory, c_run_model, c_run_history, c_run_dimension, &
                        c_run_dimension_error, c_run_destroy, c_run_predict, c_run_supervised_shape
  use qgml_c_conversions, only: to_c, extents, shape_error, text_of
  implicit none
  private

  public :: qgml_run_open, qgml_run_directory, qgml_run_model, qgml_run_epochs, qgml_run_history, &
            qgml_run_dimension, qgml_run_dimension_error, qgml_run_destroy
  public :: qgml_run_predict, qgml_run_supervised_shape

contains

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

end module qgml_runs
