"""The README as a reader meets it (issue 26): every Python block runs on its
own, every link and picture resolves where the text is read (a checkout, the
documentation site, a package index page), and the package's long
description keeps in step with the README."""

import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
LONG_DESCRIPTION = ROOT / "README_PYPI.md"
#: Files that must not point anywhere on the web: nothing of this project is
#: published (no site, repository, release or package index page), and any
#: URL to it would lead nowhere.
NO_URLS = ["README.md", "README_PYPI.md", "CHANGELOG.md", "pyproject.toml", "asv.conf.json",
           ".readthedocs.yaml", "docs/*.md"]
#: docs/conf.py may name these published sites (intersphinx, used only when
#: building online).
PUBLISHED = ("https://docs.python.org/", "https://numpy.org/", "https://scikit-learn.org/")


def python_blocks(path):
    text = path.read_text(encoding="utf-8")
    return [textwrap.dedent(m.group(2)) for m in
            re.finditer(r"^( *)```python\n(.*?)^\1```", text, re.S | re.M)]



BLOCKS = [(path.name, i, code) for path in (README, LONG_DESCRIPTION)
          for i, code in enumerate(python_blocks(path))]


def test_the_readme_has_its_blocks():
    assert len([b for b in BLOCKS if b[0] == "README.md"]) >= 4
    assert [b for b in BLOCKS if b[0] == "README_PYPI.md"]


@pytest.mark.parametrize("name,index,code", BLOCKS, ids=[f"{b[0]}-{b[1]}" for b in BLOCKS])
def test_every_python_block_runs_alone(name, index, code, tmp_path):
    """Each block in a fresh interpreter, in an empty directory: no name from
    an earlier block, no file of the checkout."""
    env = dict(os.environ, MPLBACKEND="Agg", OPENBLAS_NUM_THREADS="1",
               PYTHONWARNINGS="error")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{name} block {index} fails on its own:\n{proc.stderr}"


def _files(patterns):
    for pattern in patterns:
        yield from sorted(ROOT.glob(pattern))


def test_no_url_to_anything_unpublished():
    for path in _files(NO_URLS):
        urls = re.findall(r"https?://[^\s)\"'>]+", path.read_text(encoding="utf-8"))
        assert not urls, f"{path.relative_to(ROOT)} links to {urls}"
    conf = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    for url in re.findall(r"https?://[^\s)\"'>]+", conf):
        assert url.startswith(PUBLISHED), url


def test_readme_links_and_pictures_resolve_in_the_checkout():
    """Relative paths from the root (GitHub and a checkout); docs/install.md
    includes the picture with :relative-images:, so Sphinx resolves it too."""
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    assert "docs/onlinepca_fast_demo.png" in targets
    for target in targets:
        assert (ROOT / target).is_file(), target
    install = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    assert ":relative-images:" in install


def test_long_description_has_no_picture_or_path_link_and_opens_as_the_readme():
    """A package index page resolves no relative path: the long description
    has no picture and no link, and its opening paragraph is the README's."""
    text = LONG_DESCRIPTION.read_text(encoding="utf-8")
    assert not re.search(r"\]\(", text) and "<img" not in text
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^readme = "README_PYPI.md"$', pyproject, re.M)

    def opening(t):
        return t.split("\n```", 1)[0].strip()

    assert opening(text) == opening(README.read_text(encoding="utf-8"))


def test_ci_finds_the_two_setup_commands_and_read_the_docs_builds_the_ci_site():
    first_bash = re.search(r"^```bash\n(.*?)^```", README.read_text(encoding="utf-8"),
                           re.S | re.M).group(1)
    assert re.search(r"^pip install .*# install, run the main job$", first_bash, re.M)
    assert re.search(r"^pip install .*&& pytest +# install, run the tests$", first_bash, re.M)
    rtd = (ROOT / ".readthedocs.yaml").read_text(encoding="utf-8")
    assert re.search(r'^ +- bash tools/build_docs\.sh "\$READTHEDOCS_OUTPUT/html"$', rtd, re.M)


def test_the_demo_output_is_ignored_by_git():
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert "/demo/" in ignored
