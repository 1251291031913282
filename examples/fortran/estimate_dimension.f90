! The intrinsic dimension of points on a sphere through qgml's Fortran module (on the C interface): the
! points are made here, trained on in memory as `qgml train` would, and the run's estimate is printed.
!   estimate_dimension_fortran [OUTPUT_DIR]      (default: a directory under /tmp)
! Build: link qgml::fortran (CMake: find_package(qgml), target_link_libraries(app PRIVATE qgml::fortran)).
program estimate_dimension
  use, intrinsic :: iso_c_binding, only: c_double
  use qgml
  implicit none
  integer, parameter :: t = 400, d = 3
  real(c_double) :: x(d, t)  ! x(:, i) is point i: C's T x D row-major layout
  real(c_double) :: z, r, phi, golden, error
  type(qgml_settings_t) :: s
  type(qgml_run_t) :: run
  character(len=4096) :: out_dir
  integer :: i, dimension, low, high
  logical :: uncertain

  out_dir = "/tmp/qgml-example-fortran"
  if (command_argument_count() >= 1) call get_command_argument(1, out_dir)
  golden = acos(-1.0_c_double) * (3.0_c_double - sqrt(5.0_c_double))
  do i = 1, t  ! a Fibonacci lattice on the unit sphere
    z = 1.0_c_double - 2.0_c_double * (i - 0.5_c_double) / t
    r = sqrt(1.0_c_double - z * z)
    phi = golden * (i - 1)
    x(:, i) = [r * cos(phi), r * sin(phi), z]
  end do

  call check(qgml_initialize())
  call check(qgml_settings_create(s))
  call check(qgml_settings_set(s, "model.N", "3"))
  call check(qgml_settings_set(s, "training.epochs", "40"))
  call check(qgml_settings_set(s, "training.batch_size", "100"))
  call check(qgml_settings_set(s, "training.lr", "0.02"))
  call check(qgml_settings_set(s, "training.w", "0.25"))
  call check(qgml_settings_set(s, "output.directory", trim(out_dir)))
  call check(qgml_settings_set(s, "output.plots", "false"))

  call check(qgml_train(s, x, run))
  call check(qgml_run_dimension(run, dimension, uncertain))
  if (uncertain) then
    print '(a, i0, a)', "estimated intrinsic dimension: ", dimension, " (uncertain)"
  else
    print '(a, i0)', "estimated intrinsic dimension: ", dimension
  end if
  ! Its error bar: the spread over bootstrap resamples of the points with neighbouring gap rules.
  call check(qgml_run_dimension_error(run, error, low, high))
  print '(a, f4.2, a, i0, a, i0, a)', "error bar: +- ", error, " (90 % interval [", low, ", ", high, "])"

  call qgml_run_destroy(run)
  call qgml_settings_destroy(s)
  call check(qgml_finalize())
  if (dimension /= 2) error stop 1
  if (low > dimension .or. high < dimension .or. error < 0) error stop 1

contains

  subroutine check(status)
    integer, intent(in) :: status
    if (status /= QGML_OK) then
      write (0, '(a, i0, a)') "qgml call failed (", status, "): "//qgml_last_error()
      error stop 1
    end if
  end subroutine

end program estimate_dimension
