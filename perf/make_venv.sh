#!/bin/sh
# Creates (or updates) the Python virtual environment of the perf scripts and prints its path.
#   perf/make_venv.sh                 # build/perf-venv under the repository root
#   QGML_PERF_VENV=/some/dir perf/make_venv.sh
# Idempotent: an existing environment is reused and only missing or different pins are installed.
# Debian's python3 has no venv/ensurepip without the python3-venv package: when it is missing and
# this runs as root, it is installed with apt-get (said on stderr); otherwise the script stops.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
venv=${QGML_PERF_VENV:-$root/build/perf-venv}
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
# pip is quiet when everything is already satisfied; its log goes to stderr so stdout is only the path.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
echo "$venv"
