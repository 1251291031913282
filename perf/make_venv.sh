#!/bin/sh
# Creates (or updates) the Python virtual environment of the perf scripts and prints its path.
#   perf/make_venv.sh                 # build/perf-venv under the repository root
#   perf/make_venv.sh --peers         # the same, plus the peers: PyPI torch 2.x and jax[cpu]
#   perf/make_venv.sh --dimension     # build/dimension-venv: requirements-dimension.txt (DADApy, numpy < 2),
#                                     # the peers of perf/dimension_generalisation.py
#   QGML_PERF_VENV=/some/dir perf/make_venv.sh
# Idempotent: an existing environment is reused and only missing or different pins are installed.
# --peers: requirements-peers-torch.txt (torch alone) is installed with --no-deps, then requirements-peers.txt
# (torch's Python dependencies, the CUDA runtime libraries libtorch is linked against, and jax[cpu]).
# PyPI's only Linux x86_64 torch wheel is the CUDA build; `import torch` fails without the libraries its
# shared objects name (libcufile, libcusparseLt, libnvshmem_host, ...: 3.0 GB installed), so they are kept;
# what --no-deps leaves out is what the CPU never loads: triton (torch.compile's GPU code generator) and
# cuda-bindings (pip then warns that they are missing; harmless). The environment is then ~5.3 GB (torch
# 1.2 GB, jaxlib 0.35 GB); torch runs on the CPU with or without a GPU or driver. perf/baselines/README.md.
# Debian's python3 has no venv/ensurepip without the python3-venv package: when it is missing and
# this runs as root, it is installed with apt-get (said on stderr); otherwise the script stops.
set -eu
peers=0
dimension=0
for arg in "$@"; do
  case $arg in
    --peers) peers=1 ;;
    --dimension) dimension=1 ;;
    *) echo "make_venv.sh: unknown option $arg (usage: make_venv.sh [--peers | --dimension])" >&2; exit 2 ;;
  esac
done
if [ "$peers" = 1 ] && [ "$dimension" = 1 ]; then
  echo "make_venv.sh: --peers and --dimension make two different environments; give one" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
requirements=$here/requirements.txt
if [ "$dimension" = 1 ]; then
  venv=${QGML_DIMENSION_VENV:-$root/build/dimension-venv}
  requirements=$here/requirements-dimension.txt
else
  venv=${QGML_PERF_VENV:-$root/build/perf-venv}
fi
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
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" >&2
if [ "$peers" = 1 ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    -r "$here/requirements-peers-torch.txt" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements-peers.txt" >&2
  # Both peers must import and compute on the CPU, or the environment is not what the tables assume.
  "$venv/bin/python" - >&2 <<'EOF'
import torch, jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
h = torch.eye(4, dtype=torch.complex128)
assert float(torch.linalg.eigh(h)[0].sum()) == 4.0
assert float(jnp.linalg.eigh(jnp.eye(4, dtype=jnp.complex128))[0].sum()) == 4.0
print(f"make_venv.sh: peers ok: torch {torch.__version__} ({torch.get_num_threads()} threads), jax {jax.__version__}")
EOF
fi
echo "$venv"
