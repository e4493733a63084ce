#!/usr/bin/env bash
# Install each wheel built by tools/build_wheels.sh into a fresh virtual
# environment and run the test suite against it.
#
#   tools/test_wheels.sh WHEELDIR [--python 3.10 3.13 ...] [-- PYTEST_ARGS...]
#
#   --python V...   test the wheels of these versions only (default: every
#                   onlinepca_fast wheel in WHEELDIR with an interpreter here)
#
# pip installs the wheel and its test extra from binary distributions only
# (--only-binary :all:), so nothing is compiled.  The suite runs in a scratch
# copy of this checkout without its onlinepca_fast/ folder: the tests and the
# files they read are there, the source package (which has no compiled
# module) is not, so `import onlinepca_fast` can only find the installed wheel.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=tools/_pythons.sh
. "$here/_pythons.sh"

usage() {
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

opf_dir="" versions=() pytest_args=()
while [ $# -gt 0 ]; do
    case "$1" in
    --) shift; pytest_args=("$@"); break ;;
    *) opf_parse_arg "$@"; shift "$opf_taken" ;;
    esac
done
wheeldir=$opf_dir
if [ -z "$wheeldir" ] || [ ! -d "$wheeldir" ]; then usage; fi
wheeldir=$(cd "$wheeldir" && pwd)
if [ ${#versions[@]} -eq 0 ]; then
    read -r -a all <<<"$OPF_SUPPORTED_PYTHONS"
    for v in "${all[@]}"; do
        if compgen -G "$wheeldir/onlinepca_fast-*-cp${v/./}-cp${v/./}-*.whl" >/dev/null; then
            versions+=("$v")
        fi
    done
fi
[ ${#versions[@]} -gt 0 ] || { echo "no onlinepca_fast wheels in $wheeldir" >&2; exit 1; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/opf-test-wheels.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# The checkout without the source package: tracked and untracked files that
# git does not ignore (no build/, no environments).
src=$scratch/src
mkdir -p "$src"
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$root" && git ls-files -z --cached --others --exclude-standard) |
        grep -zv '^onlinepca_fast/' |
        (cd "$root" && tar --null --ignore-failed-read -T - -cf - 2>/dev/null) |
        tar -C "$src" -xf -
else
    (cd "$root" && tar --exclude=./onlinepca_fast --exclude=./build --exclude='./.*' -cf - .) |
        tar -C "$src" -xf -
fi
if [ -e "$src/onlinepca_fast" ] || [ ! -d "$src/tests" ]; then
    echo "could not copy the tests" >&2
    exit 1
fi

status=0
summary=()
for v in "${versions[@]}"; do
    tag="cp${v/./}"
    mapfile -t whls < <(compgen -G "$wheeldir/onlinepca_fast-*-$tag-$tag-*.whl" || true)
    if [ ${#whls[@]} -ne 1 ]; then
        echo "expected one $tag wheel in $wheeldir, found ${#whls[@]}" >&2
        status=1
        continue
    fi
    whl=${whls[0]}
    if ! py=$(opf_find_python "$v"); then
        echo "no CPython $v to test $(basename "$whl") with" >&2
        status=1
        continue
    fi
    echo "== $(basename "$whl") on $("$py" -c 'import platform; print(platform.python_version())')"
    t0=$SECONDS
    venv=$scratch/venv-$v
    "$py" -m venv "$venv"
    if ! { "$venv/bin/python" -m pip install --upgrade pip &&
        "$venv/bin/python" -m pip install --only-binary :all: "${whl}[test]"; } \
        >"$scratch/install-$v.log" 2>&1; then
        tail -n 30 "$scratch/install-$v.log"
        echo "FAILED: installing $(basename "$whl")" >&2
        status=1
        continue
    fi
    installed=$((SECONDS - t0))
    (cd "$src" && "$venv/bin/python" -c '
import onlinepca_fast, onlinepca_fast._kernels as k, sys
where = onlinepca_fast.__file__
print("  imports", where, "| version", onlinepca_fast.__version__, "| cpu_level", k.cpu_level())
sys.exit(0 if sys.prefix in where else "  not the installed wheel")')
    t1=$SECONDS
    if (cd "$src" && "$venv/bin/pytest" -p no:cacheprovider "${pytest_args[@]}"); then
        result=passed
    else
        result=FAILED
        status=1
    fi
    summary+=("CPython $v: tests $result (install $installed s, tests $((SECONDS - t1)) s)")
done
printf '%s\n' "${summary[@]}"
exit $status
