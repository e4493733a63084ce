"""The shape of the package (issue 12): no import cycle among its modules,
no module over 700 lines, and an unbuilt source tree that says how to
install instead of a circular-import error.  Issue 40, item 4: the library
apart from the application (onlinepca_fast.app), whose old paths still work
with a DeprecationWarning."""

import ast
import importlib.util
import pathlib
import re
import subprocess
import sys

import pytest

import onlinepca_fast

PACKAGE = pathlib.Path(onlinepca_fast.__file__).parent
NAME = "onlinepca_fast"


def _modules():
    mods = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = path
    return mods


def _is_module(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _imports(mods, name, deferred=False):
    """Modules of the package that `name` imports at module level (and, if
    `deferred`, inside its functions too)."""
    path = mods[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    tree = ast.parse(path.read_text())
    for node in (ast.walk(tree) if deferred else tree.body):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rsplit(".", 1)[0]
            target = (f"{base}.{node.module}" if node.module else base) if node.level \
                else node.module
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                # a submodule (also a compiled one: _kernels), or a name
                # from the module `target`
                found.add(sub if sub in mods or _is_module(sub) else target)
    return {m for m in found if m in mods and m != name}


@pytest.mark.parametrize("deferred", [False, True], ids=["module level", "anywhere"])
def test_no_import_cycle(deferred):
    """Anywhere: also through the imports inside functions (the command line
    and the sweep imported each other so)."""
    mods = _modules()
    graph = {m: _imports(mods, m, deferred) for m in mods}
    state, stack, cycles = {}, [], []

    def visit(u):
        state[u] = "open"
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == "open":
                cycles.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert cycles == []
    assert len(mods) > 15  # the walk saw the package


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")) + sorted(PACKAGE.glob("*.px[di]"))
                         + sorted(PACKAGE.glob("*.pyx")),
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_over_700_lines(path):
    assert len(path.read_text().splitlines()) <= 700


def test_unbuilt_source_tree_says_how_to_install(tmp_path):
    """A copy of the Python sources without the compiled extension, imported
    from its root, raises an ImportError that says to pip install."""
    copy = tmp_path / NAME
    for src in PACKAGE.rglob("*.py"):
        dst = copy / src.relative_to(PACKAGE)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(src.read_text())
    # (an editable install's import hook would find the real package first)
    code = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path "
            "if 'editable' not in type(f).__module__]; import " + NAME)
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path,
                         capture_output=True, text=True, check=False)
    assert run.returncode != 0
    assert "ImportError" in run.stderr and "pip install" in run.stderr
    assert "circular import" not in run.stderr


# --- issue 40, item 4: the library apart from the application ----------------------------

#: The deprecated old paths of the application's modules (and their helper).
ALIASES = {f"{NAME}.{m}" for m in ("experiments", "sweep", "plotting", "bench", "_moved")}


def _application(name):
    return (name == f"{NAME}.app" or name.startswith(f"{NAME}.app.")
            or name == f"{NAME}.__main__" or name in ALIASES)


def test_the_library_imports_nothing_of_the_application():
    """Not at module level, not inside a function."""
    mods = _modules()
    library = [m for m in mods if not _application(m)]
    assert {f"{NAME}.learners", f"{NAME}.parallel", f"{NAME}.river"} <= set(library)
    leaks = {m: sorted(filter(_application, _imports(mods, m, deferred=True)))
             for m in library}
    assert {m: found for m, found in leaks.items() if found} == {}


def test_importing_the_package_loads_no_module_of_the_application(tmp_path):
    code = ("import sys, onlinepca_fast; print('\\n'.join(m for m in sys.modules "
            "if m.startswith('onlinepca_fast')))")
    # (from a scratch folder: in a checkout's root, "import onlinepca_fast"
    # would find the uncompiled sources rather than the installed package)
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True)
    loaded = run.stdout.split()
    assert f"{NAME}.learners" in loaded
    assert [m for m in loaded if _application(m)] == []


def test_every_module_is_installed():
    """Each .py file of the package is in an install_sources of its folder's
    meson.build (a wheel would lack it otherwise)."""
    root = pathlib.Path(__file__).resolve().parent.parent
    if not (root / "meson.build").is_file():
        pytest.skip("the tests run without the checkout (a wheel's test run)")
    # (the checkout's root: the console script's entry point, _onlinepca_fast_cli.py)
    source = root / NAME
    for folder in [root] + sorted({p.parent for p in source.rglob("*.py")}):
        listed = set(re.findall(r"'([\w.]+\.py)'", (folder / "meson.build").read_text()))
        assert sorted(p.name for p in folder.glob("*.py")) == sorted(listed), folder


@pytest.mark.parametrize("old, new, name", [
    ("experiments", "app.experiments", "wk_fig4"),
    ("experiments", "app.experiments", "save_csv"),
    ("sweep", "app.sweep", "run_sweep"),
    ("plotting", "app.plotting", "plot_result"),
    ("bench", "app.bench", "ChunkedStream"),
])
def test_the_old_paths_work_with_a_deprecation_warning(old, new, name):
    target = getattr(importlib.import_module(f"{NAME}.{new}"), name)
    module = importlib.import_module(f"{NAME}.{old}")
    message = rf"{NAME}\.{old} moved to {NAME}\.{new} .* import {name} from {NAME}\.{new}"
    with pytest.warns(DeprecationWarning, match=message):
        assert getattr(module, name) is target
    with pytest.warns(DeprecationWarning, match=message):
        exec(f"from {NAME}.{old} import {name} as found", namespace := {})
    assert namespace["found"] is target
    with pytest.warns(DeprecationWarning, match=message.replace(name, "__all__")):
        assert module.__all__ == importlib.import_module(f"{NAME}.{new}").__all__
    assert name in dir(module)
    with pytest.raises(AttributeError, match=f"module '{NAME}.{old}' has no attribute"):
        module.no_such_name  # noqa: B018  (no warning either: filterwarnings = error)
