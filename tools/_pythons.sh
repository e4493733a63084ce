# shellcheck shell=bash
# Sourced by tools/build_wheels.sh and tools/test_wheels.sh: the CPython
# versions the package supports and how to find their interpreters.

# Keep in step with requires-python and the classifiers in pyproject.toml
# and with [tool.cibuildwheel] build.
# shellcheck disable=SC2034  # used by the scripts that source this file
OPF_SUPPORTED_PYTHONS="3.10 3.11 3.12 3.13"

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
