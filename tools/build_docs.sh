#!/usr/bin/env bash
# Build the documentation site into OUTDIR (HTML), warnings as errors.
#
#   bash tools/build_docs.sh OUTDIR
#
# Installs this checkout with its "docs" extra (Sphinx, numpydoc,
# pydata-sphinx-theme, sphinx-gallery, myst-parser, matplotlib) into a
# temporary virtual environment, then runs sphinx-build: the API pages
# (autosummary + numpydoc, whose validation of every documented object must
# be clean), the gallery (each paper's experiment on small sizes, with its
# figure) and the performance page (per-trial time against n, measured
# while building); then tools/check_docs.py checks the pages.  No network is
# used after the install.
set -euo pipefail
if [ $# -ne 1 ] || [ "${1:0:1}" = "-" ]; then
    echo "usage: bash tools/build_docs.sh OUTDIR" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

python3 -m venv "$scratch/venv"
# shellcheck disable=SC1091
. "$scratch/venv/bin/activate"
python -m pip install --quiet --upgrade pip
python -m pip install --quiet "$root[docs]"

# build from a copy of docs/ so that the generated pages (API stubs, the
# gallery) never land in the checkout
cp -r "$root/docs" "$scratch/docs"
cp "$root/README.md" "$root/CHANGELOG.md" "$scratch/"
cd "$scratch"  # the installed package is imported, not the source tree
MPLBACKEND=Agg OPENBLAS_NUM_THREADS=1 python -m sphinx -W --keep-going -b html -j 1 \
    "$scratch/docs" "$out"
# what Sphinx does not warn about: API summaries cut mid-citation, the repr
# of a matplotlib object on a gallery page, "this README" on a site page
python "$root/tools/check_docs.py" "$out"
echo "wrote the site to $out (open $out/index.html)"
