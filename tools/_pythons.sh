# shellcheck shell=bash
# Sourced by tools/build_wheels.sh and tools/test_wheels.sh: the CPython
# versions the package supports, how to read them from the command line and
# how to find their interpreters.

# Keep in step with requires-python and the classifiers in pyproject.toml
# and with [tool.cibuildwheel] build.
# shellcheck disable=SC2034  # used by the scripts that source this file
OPF_SUPPORTED_PYTHONS="3.10 3.11 3.12 3.13"

# opf_parse_arg ARGS...: reads the argument at the start of ARGS by the
# command line the wheel tools share, `DIR [--python X.Y ...]`: DIR into
# opf_dir (which the caller sets to ""), the versions after --python (up to
# the next option) appended to the caller's array `versions`; -h, --help, an
# unknown option or a second DIR calls the caller's usage.  opf_taken is set
# to how many arguments were read, for the caller's shift.
opf_parse_arg() {
    opf_taken=1
    case "$1" in
    --python)
        shift
        while [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; do
            versions+=("$1")
            opf_taken=$((opf_taken + 1))
            shift
        done
        ;;
    -h | --help) usage ;;
    -*) echo "unknown option $1" >&2; usage ;;
    *)
        [ -z "$opf_dir" ] || usage
        opf_dir=$1
        ;;
    esac
}

# opf_find_python X.Y: print the path of a CPython X.Y interpreter that can
# make virtual environments (with pip), or return 1.  Looks at pyenv's
# versions (newest patch release first), then python X.Y on PATH, then the
# usual system places.  The free-threaded build is not a target.
opf_find_python() {
    local v=$1 root c
    local -a cands=()
    root=$( (pyenv root) 2>/dev/null || true)
    root=${root:-${PYENV_ROOT:-$HOME/.pyenv}}
    if [ -d "$root/versions" ]; then
        while IFS= read -r c; do
            cands+=("$c/bin/python$v")
        done < <(find "$root/versions" -mindepth 1 -maxdepth 1 -name "$v.*" | sort -V -r)
    fi
    cands+=("$(command -v "python$v" 2>/dev/null || true)" "/usr/local/bin/python$v" "/usr/bin/python$v")
    for c in "${cands[@]}"; do
        if [ -z "$c" ] || [ ! -x "$c" ]; then continue; fi
        if "$c" - "$v" >/dev/null 2>&1 <<'EOF'
import sys, sysconfig
import ensurepip, venv  # noqa: F401  (Debian splits them off)
ok = (sys.implementation.name == "cpython"
      and "%d.%d" % sys.version_info[:2] == sys.argv[1]
      and not sysconfig.get_config_var("Py_GIL_DISABLED"))
sys.exit(0 if ok else 1)
EOF
        then
            echo "$c"
            return 0
        fi
    done
    return 1
}
