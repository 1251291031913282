#!/usr/bin/env bash
# check_no_shell.sh SOURCE_DIR
# Fails when the library, the program or a binding starts a shell: system(), popen() (C, C++, Fortran
# through C) or os.system / os.popen / shell=True (Python). External programs are started with an
# argument vector (driver/run/child_process.hpp), so that no file name is ever parsed by a shell.
set -u
src=$1
cd "$src" || exit 2
hits=$(grep -rnE '(^|[^A-Za-z0-9_])(system|popen)[[:space:]]*\(' \
         --include='*.c' --include='*.cc' --include='*.cpp' --include='*.cxx' --include='*.h' --include='*.hpp' \
         --include='*.cu' --include='*.f90' --include='*.F90' core driver apps backends bindings
       grep -rnE '(os\.(system|popen)[[:space:]]*\(|shell[[:space:]]*=[[:space:]]*True)' --include='*.py' \
         core driver apps backends bindings)
if [ -n "$hits" ]; then
  echo "FAIL: a shell is started (use qgml::app::run_program with an argument vector):"
  echo "$hits"
  exit 1
fi
echo "ok: no system(), popen() or shell=True in core/, driver/, apps/, backends/, bindings/"
