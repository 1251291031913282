#!/usr/bin/env bash
# qgml dependency bootstrap.
#
# Installs the Debian packages the build needs, obtains Kokkos and KokkosKernels (3.4.01 from Debian's
# trilinos 13.2 source package, or 4.6.01 from the projects' release archives) and Catch2 3.7.1 from
# Debian's catch2 source package, and builds them into a cache prefix outside the repository.
# Idempotent: a finished step leaves a stamp and is skipped.
#
#   qgml-deps.sh [--backend serial|openmp|cuda] [--arch ARCH] [--mpi] [--cache DIR] [--no-apt|--offline]
#                [--kokkos-version 3.4.01|4.6.01] [--archives DIR] [--print-prefix]
#   qgml-deps.sh --catch2-only [--cache DIR] [--no-apt|--offline]
#   qgml-deps.sh --sources-only [--cache DIR]
#
# --arch (cuda only): the Kokkos GPU architecture, AMPERE80 (default, A100, sm_80), AMPERE86, TURING75,
#   VOLTA70, VOLTA72 or HOPPER90 (H100/H200, sm_90; added to Kokkos 3.4.01 by patch-kokkos-cuda13.sh).
# --catch2-only builds only Catch2 (for a user who brings Kokkos: Kokkos_ROOT) and prints its prefix.
# --sources-only downloads and extracts the source packages into DIR/src, builds nothing, prints DIR/src;
#   it also fetches yaml-cpp's source (otherwise a Debian binary package) for offline machines.
# --offline (a machine without network, e.g. with sources from perf/gpu/pack_sources.sh): installs
#   nothing, downloads nothing; checks for the tools and the extracted sources instead.
# --mpi also installs Debian's Open MPI (libopenmpi-dev, openmpi-bin) for QGML_ENABLE_MPI builds.
# --kokkos-version: 3.4.01 (the default; Debian's archive is all it needs) or 4.6.01. 4.6.01 is built from
#   the upstream release archives kokkos-4.6.01.tar.gz and kokkos-kernels-4.6.01.tar.gz, taken from
#   --archives DIR (default $QGML_KOKKOS_ARCHIVES) or, when no directory is given, downloaded from the
#   projects' GitHub release pages; either way their SHA-256 must match the checksums pinned below.
#
# Cache layout (DIR defaults to $QGML_DEPS_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/qgml):
#   DIR/src/                     downloaded source packages and extracted trees
#   DIR/kokkos-<backend>/        Kokkos + KokkosKernels 3.4.01 installed for serial or openmp
#   DIR/kokkos-cuda-<arch>/      the same for CUDA, one per architecture (e.g. kokkos-cuda-hopper90)
#   DIR/kokkos-4.6.01-<backend>/, DIR/kokkos-4.6.01-cuda-<arch>/   the same for Kokkos 4.6.01
#   DIR/catch2/                  Catch2 v3 (host compiler)
# The last line printed on success is the backend's install prefix.
set -euo pipefail

backend=openmp
cache="${QGML_DEPS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qgml}"
use_apt=1
print_prefix=0
use_mpi=0
catch2_only=0
sources_only=0
offline=0
arch=AMPERE80
kokkos_version=3.4.01
archives="${QGML_KOKKOS_ARCHIVES:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) backend="$2"; shift 2 ;;
    --backend=*) backend="${1#*=}"; shift ;;
    --cache) cache="$2"; shift 2 ;;
    --cache=*) cache="${1#*=}"; shift ;;
    --arch) arch="$2"; shift 2 ;;
    --arch=*) arch="${1#*=}"; shift ;;
    --no-apt) use_apt=0; shift ;;
    --offline) offline=1; use_apt=0; shift ;;
    --sources-only) sources_only=1; shift ;;
    --mpi) use_mpi=1; shift ;;
    --catch2-only) catch2_only=1; shift ;;
    --print-prefix) print_prefix=1; shift ;;
    --kokkos-version) kokkos_version="$2"; shift 2 ;;
    --kokkos-version=*) kokkos_version="${1#*=}"; shift ;;
    --archives) archives="$2"; shift 2 ;;
    --archives=*) archives="${1#*=}"; shift ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "qgml-deps: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$backend" in serial|openmp|cuda) ;; *)
  echo "qgml-deps: --backend must be serial, openmp or cuda, got '$backend'" >&2; exit 2 ;;
esac
case "$arch" in VOLTA70|VOLTA72|TURING75|AMPERE80|AMPERE86|HOPPER90) ;; *)
  echo "qgml-deps: --arch must be VOLTA70, VOLTA72, TURING75, AMPERE80, AMPERE86 or HOPPER90, got '$arch'" >&2
  exit 2 ;;
esac
case "$kokkos_version" in 3.4.01|4.6.01) ;; *)
  echo "qgml-deps: --kokkos-version must be 3.4.01 or 4.6.01, got '$kokkos_version'" >&2; exit 2 ;;
esac
if [ -n "$archives" ] && [ ! -d "$archives" ]; then
  echo "qgml-deps: --archives '$archives' is not a directory" >&2; exit 2
fi
if [ "$offline" = 1 ] && [ "$sources_only" = 1 ]; then
  echo "qgml-deps: --sources-only downloads; it cannot be combined with --offline" >&2; exit 2
fi

# Bump when the build recipe changes, so stale caches are rebuilt.
recipe=3
trilinos_deb=13.2.0-4
# Kokkos 4.6.01 release archives (git archive of the release tags 1b1383c6 and 38ed37e8).
kokkos4_sha256=b9d70e4653b87a06dbb48d63291bf248058c7c7db4bd91979676ad5609bb1a3a
kokkos_kernels4_sha256=95b9357f37ab3b9c3913c00741acb2501831c28ea8664de67818ae79c69c5908
catch2_deb=3.7.1-0.6
yaml_cpp_deb=0.7.0+dfsg-8
flavour="$backend"
[ "$backend" = cuda ] && flavour="cuda-$(echo "$arch" | tr '[:upper:]' '[:lower:]')"
[ "$kokkos_version" = 3.4.01 ] || flavour="$kokkos_version-$flavour"
prefix="$cache/kokkos-$flavour"
if [ "$print_prefix" = 1 ]; then echo "$prefix"; exit 0; fi

# Temporary directories, removed however the script ends (die exits from inside functions).
temporary_dirs=()
trap 'rm -rf "${temporary_dirs[@]}"' EXIT
log() { echo "qgml-deps: $*" >&2; }
die() { echo "qgml-deps: error: $*" >&2; exit 1; }
jobs=$(nproc 2>/dev/null || echo 2)

# ---------------------------------------------------------------------------------------------
# 1. Debian packages (offline: only the tools)
if [ "$offline" = 1 ]; then
  for tool in cmake ninja tar; do
    command -v "$tool" >/dev/null || die "--offline: '$tool' is not on PATH"
  done
  command -v c++ >/dev/null || command -v g++ >/dev/null || die "--offline: no C++ compiler (c++, g++) on PATH"
fi
packages=(g++ cmake ninja-build ccache pkg-config liblapacke-dev libopenblas-dev libyaml-cpp-dev nlohmann-json3-dev ca-certificates
          python3-matplotlib)  # matplotlib: the plots of a run (driver/run/plot_run.py)
[ "$use_mpi" = 1 ] && packages+=(libopenmpi-dev openmpi-bin)
missing=()
[ "$offline" = 1 ] || [ "$sources_only" = 1 ] || for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$use_apt" = 0 ]; then
    die "missing Debian packages: ${missing[*]} (install them, or drop --no-apt)"
  fi
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || die "missing Debian packages: ${missing[*]}; run as root: apt-get install ${missing[*]}"
    sudo="sudo"
  fi
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
    { $sudo apt-get update >&2 && $sudo apt-get install -y --no-install-recommends "${missing[@]}" >&2; } ||
    die "apt-get install ${missing[*]} failed"
fi

# ---------------------------------------------------------------------------------------------
# 2. Source packages, through a temporary deb-src list derived from the machine's own apt sources
#    (nothing under /etc is changed and no host name is written anywhere).
src="$cache/src"
mkdir -p "$src"
# One bootstrap at a time per cache (two presets configured at once would race on the same files).
if command -v flock >/dev/null; then
  exec 9>"$cache/.lock"
  flock 9
fi
fetch_sources() {
  local tmp uris signed
  tmp=$(mktemp -d)
  temporary_dirs+=("$tmp")
  mkdir -p "$tmp/lists/partial"
  local sources=/etc/apt/sources.list.d/debian.sources
  if [ -f "$sources" ]; then
    uris=$(awk '/^URIs:/{print $2; exit}' "$sources")
    signed=$(awk '/^Signed-By:/{print $2; exit}' "$sources")
  elif [ -f /etc/apt/sources.list ]; then
    uris=$(awk '$1=="deb"{for(i=2;i<=NF;i++) if($i ~ /^[a-z]+:\/\//){print $i; exit}}' /etc/apt/sources.list)
    signed=/usr/share/keyrings/debian-archive-keyring.gpg
  fi
  [ -n "${uris:-}" ] || die "cannot find a Debian archive URI in the apt sources of this machine"
  {
    echo "Types: deb-src"
    echo "URIs: $uris"
    echo "Suites: bookworm sid"
    echo "Components: main"
    [ -n "${signed:-}" ] && echo "Signed-By: $signed"
  } >"$tmp/qgml-src.sources"
  local opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$tmp"
              -o "Dir::State::Lists=$tmp/lists" -o APT::Sandbox::User=root)
  apt-get "${opts[@]}" update >&2 || die "apt-get update of the source lists failed"
  (cd "$src" && apt-get "${opts[@]}" source --download-only "$@" >&2) ||
    die "apt-get source --download-only $* failed"
}

kokkos_src="$src/trilinos-$trilinos_deb"
[ "$kokkos_version" = 3.4.01 ] || kokkos_src="$src/kokkos-sources-$kokkos_version"
catch2_src="$src/Catch2-3.7.1"
yaml_cpp_src="$src/yaml-cpp-0.7.0"
need=()
[ "$catch2_only" = 1 ] || [ "$kokkos_version" != 3.4.01 ] || [ -f "$kokkos_src/.extracted" ] ||
  need+=("trilinos=$trilinos_deb")
[ -f "$catch2_src/.extracted" ] || need+=("catch2=$catch2_deb")
[ "$sources_only" = 0 ] || [ -f "$yaml_cpp_src/.extracted" ] || need+=("yaml-cpp=$yaml_cpp_deb")
if [ ${#need[@]} -gt 0 ] && [ "$offline" = 1 ]; then
  die "--offline: the sources of ${need[*]} are not extracted in $src (make them on a networked machine" \
      "with perf/gpu/pack_sources.sh and unpack the tarball into $cache)"
fi
if [ ${#need[@]} -gt 0 ]; then
  log "downloading source packages: ${need[*]}"
  fetch_sources "${need[@]}"
fi
# Kokkos 4.6.01: the release archives from --archives or the release pages, checked against the pinned
# SHA-256, each unpacked into $kokkos_src/<project> (the layout the trilinos extraction gives).
fetch_kokkos4() {
  local project sum file url tmp
  tmp=$(mktemp -d "$src/kokkos4.XXXXXX")
  temporary_dirs+=("$tmp")
  for project in kokkos kokkos-kernels; do
    file="$project-$kokkos_version.tar.gz"
    sum=$kokkos4_sha256
    [ "$project" = kokkos ] || sum=$kokkos_kernels4_sha256
    if [ -n "$archives" ]; then
      [ -f "$archives/$file" ] ||
        die "the Kokkos $kokkos_version archives are not in '$archives': $file is missing (expected" \
            "kokkos-$kokkos_version.tar.gz and kokkos-kernels-$kokkos_version.tar.gz, the projects' release archives)"
      cp "$archives/$file" "$tmp/$file"
    elif [ "$offline" = 1 ]; then
      die "--offline: Kokkos $kokkos_version needs its release archives; pass --archives DIR (or set" \
          "QGML_KOKKOS_ARCHIVES) with kokkos-$kokkos_version.tar.gz and kokkos-kernels-$kokkos_version.tar.gz"
    else
      url="https://github.com/kokkos/$project/releases/download/$kokkos_version/$file"
      log "downloading $url"
      if command -v curl >/dev/null; then
        curl -fsSL --proto '=https' -o "$tmp/$file" "$url" || die "download of $url failed (no network? use --archives DIR)"
      elif command -v wget >/dev/null; then
        wget -q --https-only -O "$tmp/$file" "$url" || die "download of $url failed (no network? use --archives DIR)"
      else
        die "neither curl nor wget is installed to download $url; use --archives DIR"
      fi
    fi
    echo "$sum  $tmp/$file" | sha256sum -c --status ||
      die "$file: SHA-256 $(sha256sum "$tmp/$file" | cut -d' ' -f1) is not the pinned $sum (a different or damaged archive)"
    mkdir -p "$tmp/$project"
    tar -xzf "$tmp/$file" -C "$tmp/$project" --strip-components=1 ||
      die "$file: not a readable tar.gz archive"
  done
  rm -rf "$kokkos_src" && mkdir -p "$kokkos_src"
  mv "$tmp/kokkos" "$tmp/kokkos-kernels" "$kokkos_src/"
  touch "$kokkos_src/.extracted"
}
if [ "$catch2_only" = 0 ] && [ "$kokkos_version" != 3.4.01 ] && [ ! -f "$kokkos_src/.extracted" ]; then
  log "unpacking Kokkos and KokkosKernels $kokkos_version"
  fetch_kokkos4
fi
if [ "$catch2_only" = 0 ] && [ ! -f "$kokkos_src/.extracted" ]; then
  log "extracting Kokkos and KokkosKernels from trilinos $trilinos_deb"
  rm -rf "$kokkos_src" "$src/extract.tmp" && mkdir -p "$src/extract.tmp"
  tar -xzf "$src"/trilinos_13.2.0.orig.tar.gz -C "$src/extract.tmp" \
    --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
  mkdir -p "$kokkos_src"
  mv "$src"/extract.tmp/*/packages/kokkos "$src"/extract.tmp/*/packages/kokkos-kernels "$kokkos_src/"
  rm -rf "$src/extract.tmp" "$src"/trilinos_13.2.0.orig.tar.gz
  touch "$kokkos_src/.extracted"
fi
if [ ! -f "$catch2_src/.extracted" ]; then
  rm -rf "$catch2_src"
  tar -xzf "$src"/catch2_3.7.1.orig.tar.gz -C "$src"
  touch "$catch2_src/.extracted"
fi

if [ "$sources_only" = 1 ] && [ ! -f "$yaml_cpp_src/.extracted" ]; then
  rm -rf "$yaml_cpp_src" "$src/extract.tmp" && mkdir -p "$src/extract.tmp"
  tar -xf "$src"/yaml-cpp_0.7.0+dfsg.orig.tar.* -C "$src/extract.tmp"
  mv "$src"/extract.tmp/* "$yaml_cpp_src" && rm -rf "$src/extract.tmp"
  touch "$yaml_cpp_src/.extracted"
fi
if [ "$sources_only" = 1 ]; then
  log "sources ready: $src"
  echo "$src"
  exit 0
fi

# ---------------------------------------------------------------------------------------------
# 3. Builds
cmake_build() { # name srcdir builddir prefix [cmake args...]
  local name=$1 s=$2 b=$3 p=$4; shift 4
  log "building $name (logs in $b.log)"
  rm -rf "$b"
  if ! { cmake -S "$s" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$p" "$@" &&
         cmake --build "$b" -j "$jobs" && cmake --install "$b"; } >"$b.log" 2>&1; then
    tail -n 40 "$b.log" >&2
    die "building $name failed; full log: $b.log"
  fi
  rm -rf "$b"
}

stamp_catch2="$cache/catch2/.qgml-recipe-$recipe"
if [ ! -f "$stamp_catch2" ]; then
  rm -rf "$cache/catch2"
  cmake_build catch2 "$catch2_src" "$cache/build-catch2" "$cache/catch2" \
    -DCMAKE_CXX_STANDARD=17 -DCATCH_INSTALL_DOCS=OFF -DCATCH_INSTALL_EXTRAS=ON -DBUILD_TESTING=OFF
  touch "$stamp_catch2"
fi
if [ "$catch2_only" = 1 ]; then
  log "ready: $cache/catch2"
  echo "$cache/catch2"
  exit 0
fi

stamp="$prefix/.qgml-recipe-$recipe"
if [ ! -f "$stamp" ]; then
  rm -rf "$prefix"
  tree="$cache/src/kokkos-$flavour-tree"
  rm -rf "$tree" && mkdir -p "$tree"
  cp -a "$kokkos_src/kokkos" "$kokkos_src/kokkos-kernels" "$tree/"
  kokkos_args=(-DCMAKE_CXX_STANDARD=17 -DCMAKE_CXX_EXTENSIONS=OFF -DKokkos_ENABLE_SERIAL=ON
               -DCMAKE_POSITION_INDEPENDENT_CODE=ON)
  kk_args=(-DKokkos_ROOT="$prefix" -DKokkosKernels_ADD_DEFAULT_ETI=OFF -DKokkosKernels_INST_DOUBLE=OFF
           -DKokkosKernels_INST_COMPLEX_DOUBLE=OFF -DKokkosKernels_ENABLE_TESTS=OFF
           -DCMAKE_CXX_STANDARD=17 -DCMAKE_CXX_EXTENSIONS=OFF)
  if [ "$kokkos_version" = 3.4.01 ]; then
    kk_args+=("-DKokkosKernels_ENABLED_COMPONENTS=BATCHED;BLAS")
  else
    # Kokkos 4: no code deprecated in 4.x (what Kokkos 5 removes) may be used by qgml.
    kokkos_args+=(-DKokkos_ENABLE_DEPRECATED_CODE_4=OFF)
    kk_args+=(-DKokkosKernels_ENABLE_ALL_COMPONENTS=OFF -DKokkosKernels_ENABLE_COMPONENT_BLAS=ON
              -DKokkosKernels_ENABLE_COMPONENT_BATCHED=ON -DKokkosKernels_ENABLE_COMPONENT_LAPACK=ON)
  fi
  case "$backend" in
    serial) ;;
    openmp) kokkos_args+=(-DKokkos_ENABLE_OPENMP=ON) ;;
    cuda)
      command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
        die "the cuda backend needs the CUDA toolkit (nvcc); none found on PATH or in /usr/local/cuda"
      export PATH="$PATH:/usr/local/cuda/bin"
      if [ "$kokkos_version" = 3.4.01 ]; then
        bash "$(dirname "$0")/patch-kokkos-cuda13.sh" "$tree/kokkos"
      else
        bash "$(dirname "$0")/patch-kokkos4-cuda13.sh" "$tree/kokkos"
      fi
      # KokkosBlas::gemm on CUDA Views calls cuBLAS (checked with KokkosKernels 3.4.01 and CUDA 13).
      kokkos_args+=(-DKokkos_ENABLE_CUDA=ON "-DKokkos_ARCH_$arch=ON" -DKokkos_ENABLE_CUDA_LAMBDA=ON
                    -DCMAKE_CXX_COMPILER="$tree/kokkos/bin/nvcc_wrapper")
      kk_args+=(-DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper" -DKokkosKernels_ENABLE_TPL_CUBLAS=ON)
      if command -v ccache >/dev/null; then
        kokkos_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
        kk_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
      fi
      ;;
  esac
  if [ "$backend" != cuda ]; then
    kk_args+=(-DKokkosKernels_ENABLE_TPL_BLAS=ON -DKokkosKernels_ENABLE_TPL_LAPACK=ON
              -DBLAS_LIBRARIES=openblas -DLAPACK_LIBRARIES=openblas)
  fi
  label="$backend"
  [ "$backend" = cuda ] && label="cuda $arch"
  cmake_build "kokkos $kokkos_version ($label)" "$tree/kokkos" "$cache/build-kokkos-$flavour" "$prefix" \
    "${kokkos_args[@]}"
  cmake_build "kokkos-kernels $kokkos_version ($label)" "$tree/kokkos-kernels" \
    "$cache/build-kk-$flavour" "$prefix" "${kk_args[@]}"
  rm -rf "$tree"
  touch "$stamp"
fi
log "ready: $prefix"
echo "$prefix"
