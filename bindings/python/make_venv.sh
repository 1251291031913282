#!/bin/sh
# Creates (or updates) the virtual environment of the Python package's tests and prints its path.
#   bindings/python/make_venv.sh                  # build/python-venv under the repository root
#   QGML_PYTHON_VENV=/some/dir bindings/python/make_venv.sh
# Installs from PyPI what building (`pip install --no-build-isolation .`) and testing the package need:
# scikit-build-core, nanobind, numpy, pytest, scikit-learn, pandas (scikit-learn's checks on data frames) and
# scikit-dimension (the estimator's API
# check; skipped by the tests when it does not install). Idempotent; the log goes to stderr so stdout
# is only the path. Debian's python3 needs python3-venv: installed with apt-get when running as root.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=${QGML_PYTHON_VENV:-$root/build/python-venv}
python=${PYTHON:-python3}

if [ ! -x "$venv/bin/python" ]; then
  if ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "make_venv.sh: $python has no venv/ensurepip; installing python3-venv with apt-get" >&2
      apt-get update >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv >&2
    else
      echo "make_venv.sh: $python has no venv/ensurepip; install python3-venv (apt-get install python3-venv as root)" >&2
      exit 1
    fi
  fi
  echo "make_venv.sh: creating $venv" >&2
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv"
fi
pip() { "$venv/bin/python" -m pip --disable-pip-version-check "$@"; }
pip install --quiet -r "$here/requirements-test.txt" >&2
# scikit-dimension is optional: the estimator tests skip skdim's checks without it.
pip install --quiet "scikit-dimension==0.5.0" >&2 ||
  echo "make_venv.sh: scikit-dimension did not install; its API checks will be skipped" >&2
echo "$venv"
