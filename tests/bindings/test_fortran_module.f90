! The Fortran module's own argument checks: a wrongly shaped array gives QGML_ERROR_INVALID_ARGUMENT and a
! last-error message naming the call, the array, the expected and the given extents; a well-shaped call
! still succeeds; qgml_run_predict of a short regression run. Stops with code 1 at the first failed check.
program test_fortran_module
  use, intrinsic :: iso_c_binding
  use qgml
  implicit none
  complex(c_double_complex) :: a(2, 2, 2), not_square(2, 3, 2)
  real(c_double) :: x(2, 3), xbar(2, 3), short(2), wrong_xbar(3, 2), metric(2, 2, 3), bad_metric(2, 2, 2)
  real(c_double) :: eigenvalues(2, 3)
  real(c_double) :: rows(3, 60), features(2, 60), prediction(60), output(60), three(3)
  integer(c_int64_t) :: failed
  type(qgml_model_t) :: m, unused
  type(qgml_settings_t) :: s
  type(qgml_run_t) :: r
  logical :: started
  integer :: d, n, t

  call check(qgml_initialize(1, started) == QGML_OK, "qgml_initialize")
  a = (0.0_c_double, 0.0_c_double)
  a(1, 1, 1) = (1.0_c_double, 0.0_c_double)
  a(2, 2, 1) = (-1.0_c_double, 0.0_c_double)
  a(1, 2, 2) = (1.0_c_double, 0.0_c_double)
  a(2, 1, 2) = (1.0_c_double, 0.0_c_double)
  not_square = (0.0_c_double, 0.0_c_double)
  x = reshape([0.1_c_double, 0.2_c_double, -0.3_c_double, 0.4_c_double, 0.5_c_double, 0.0_c_double], [2, 3])

  call expect_error(qgml_model_create(not_square, unused), &
                    "qgml_model_create: a must be N x N x D, its first two extents equal (got 2 x 3 x 2)")
  call check(qgml_model_create(a, m) == QGML_OK, "qgml_model_create: "//qgml_last_error())
  call check(qgml_model_shape(m, d, n) == QGML_OK .and. d == 2 .and. n == 2, "qgml_model_shape")

  call expect_error(qgml_evaluate(m, x, 0.0_c_double, xbar=wrong_xbar), &
                    "qgml_evaluate: xbar must have the shape of x, D x T = 2 x 3 (got 3 x 2)")
  call expect_error(qgml_evaluate(m, x, 0.0_c_double, sigma2=short), &
                    "qgml_evaluate: sigma2 must have T = size(x, 2) = 3 entries (got 2)")
  call expect_error(qgml_evaluate(m, x, 0.0_c_double, energy=short), &
                    "qgml_evaluate: energy must have T = size(x, 2) = 3 entries (got 2)")
  call expect_error(qgml_quantum_metric(m, x, metric=bad_metric), &
                    "qgml_quantum_metric: metric must be D x D x T = 2 x 2 x 3 (got 2 x 2 x 2)")
  call expect_error(qgml_quantum_metric(m, x, eigenvalues=wrong_xbar), &
                    "qgml_quantum_metric: eigenvalues must have the shape of x, D x T = 2 x 3 (got 3 x 2)")

  ! The same calls, well shaped: the checks pass them through.
  call check(qgml_evaluate(m, x, 0.0_c_double, xbar=xbar) == QGML_OK, "qgml_evaluate: "//qgml_last_error())
  call check(all(abs(xbar) <= 1.0_c_double) .and. any(xbar /= 0.0_c_double), "xbar within the spectra of A_k")
  call check(qgml_quantum_metric(m, x, metric=metric, eigenvalues=eigenvalues) == QGML_OK, &
             "qgml_quantum_metric: "//qgml_last_error())
  call qgml_model_destroy(m)

  ! A short regression run on rows (x_1, x_2, y), y = 3 + 2 x_1; its predictions at the features.
  do t = 1, 60
    rows(1, t) = -1.0_c_double + 2.0_c_double * (t - 1) / 59.0_c_double
    rows(2, t) = sin(0.7_c_double * t)
    rows(3, t) = 3.0_c_double + 2.0_c_double * rows(1, t)
  end do
  features = rows(1:2, :)
  call check(qgml_settings_create(s) == QGML_OK, "qgml_settings_create")
  call check(qgml_settings_set(s, "task", "regression") == QGML_OK, "task: "//qgml_last_error())
  call check(qgml_settings_set(s, "model.N", "3") == QGML_OK, "model.N")
  call check(qgml_settings_set(s, "training.epochs", "30") == QGML_OK, "training.epochs")
  call check(qgml_settings_set(s, "training.lr", "0.05") == QGML_OK, "training.lr")
  call check(qgml_settings_set(s, "output.plots", "false") == QGML_OK, "output.plots")
  call check(qgml_settings_set(s, "output.directory", "qgml-fortran-module-runs") == QGML_OK, "output.directory")
  call check(qgml_train(s, rows, r) == QGML_OK, "qgml_train: "//qgml_last_error())
  call expect_error(qgml_run_predict(r, features, three), &
                    "qgml_run_predict: prediction must have 1 x T = 60 entries (got 3)")
  call expect_error(qgml_run_predict(r, features, prediction, output=three), &
                    "qgml_run_predict: output must have C x T = 60 entries (got 3)")
  call check(qgml_run_predict(r, features, prediction, output=output, failed=failed) == QGML_OK, &
             "qgml_run_predict: "//qgml_last_error())
  call check(failed == 0, "qgml_run_predict: no failed points")
  call check(all(abs(output) < 10.0_c_double) .and. maxval(prediction) - minval(prediction) > 1.0_c_double, &
             "qgml_run_predict: predictions follow the target")
  call check(sum(abs(prediction - rows(3, :))) / 60 < 0.5_c_double, &
             "qgml_run_predict: mean absolute error below a quarter of the target's range")
  call qgml_run_destroy(r)
  call qgml_settings_destroy(s)
  call check(qgml_finalize() == QGML_OK, "qgml_finalize")
  print '(a)', "all Fortran module checks passed"

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write (0, '(a)') "FAILED: "//what
      stop 1
    end if
  end subroutine

  subroutine expect_error(status, message)
    integer, intent(in) :: status
    character(len=*), intent(in) :: message
    call check(status == QGML_ERROR_INVALID_ARGUMENT, "status of '"//message//"'")
    call check(qgml_last_error() == message, "message '"//qgml_last_error()//"', expected '"//message//"'")
  end subroutine

end program
