"""The package's architecture, read from its source: which module imports which (top-level and inside
functions alike, read with ``ast``: nothing is imported), and what each folder says it holds.

The layers, from the bottom (docs/contributing.rst draws them):

- **the specification** — :mod:`formal` but :mod:`formal.tools` (vocabulary, cost model, ops, engine,
  algorithms, models, graphs, the examples the spec implies) imports nothing outside itself;
- **the execution layer** — :mod:`reference.execution` (where tasks run, and the children every process for one
  piece of work is) imports the spec alone;
- **reference** and **proofs** import the spec, never a tool; proofs imports nothing of reference but the
  execution layer;
- **the tools** — :mod:`formal.tools` (the command line and its commands, the claims checker, the Sphinx
  extension) and ``python -m formal`` — import all of them.

Besides: no import cycle but the engine's (:data:`ENGINE`, each of its files named); nothing imports the
command line but ``python -m formal``, and nothing but the command line and its commands imports the argument
types; no entry point is looked up (the package finds its own parts by importing them); every package's
docstring names each of its modules; no folder of ``reference`` holds more than :data:`MAX_MODULES` modules
but the two whose modules are one per family (:data:`FAMILY_FOLDERS`); only the execution layer starts a process
or a pool, and no thread is interrupted by an exception injected into it.  Each assertion names the offenders.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("formal", "reference", "proofs")
#: The one cycle allowed: the engine's modules import each other lazily by design — an algorithm derives and
#: executes its lines (``algorithm`` → ``derivation``, ``execution``), a line calls another algorithm
#: (``calls`` → ``algorithm``), and the fast paths (``tape``, ``batches``, ``columns``) replay what the
#: executor (``execution``, ``lines``) checked.
ENGINE = {"formal.engine.algorithm", "formal.engine.calls", "formal.engine.derivation", "formal.engine.execution",
          "formal.engine.lines", "formal.engine.columns", "formal.engine.tape", "formal.engine.batches"}
#: The tools: everything that uses the spec rather than being it.
TOOLS = "formal.tools"
#: Modules of ``formal`` that belong to the tools: ``python -m formal``, and the old names of the extension, the
#: claims checker and the command line (deprecated aliases of formal.tools.sphinx, .claims and .cli).
FRONT_DOORS = {"formal.__main__", "formal.sphinx", "formal.claims", "formal.cli"}
DEPRECATED = {"formal.sphinx": "formal.tools.sphinx", "formal.claims": "formal.tools.claims",
              "formal.cli": "formal.tools.cli"}
#: The most modules a folder of ``reference`` holds, but for the folders of one module per family.
MAX_MODULES = 15
FAMILY_FOLDERS = {"reference.model", "reference.catalogue"}


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def _absolute(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute name of ``from {'.' * level}{target} import …`` written in ``module``."""
    if level == 0:
        return target or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _known(name: str) -> str | None:
    """The module of the packages ``name`` is, or is inside (a name imported from it); None if outside."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _type_checking(node) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imports(module: str) -> set:
    """The modules of the packages ``module`` imports, at the top or inside functions (not under
    ``if TYPE_CHECKING:``)."""
    path = MODULES[module]
    found = set()
    stack = [ast.parse(path.read_text(encoding="utf-8"))]
    while stack:
        for node in ast.iter_child_nodes(stack.pop()):
            if _type_checking(node):
                continue
            stack.append(node)
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(module, path.name == "__init__.py", node.level, node.module)
                found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names)
    return {m for m in map(_known, found) if m is not None and m != module}


EXECUTION = "reference.execution"


def layer(module: str) -> str:
    """``spec``, ``execution``, ``reference``, ``proofs`` or ``tools``."""
    if module in FRONT_DOORS or module == TOOLS or module.startswith(TOOLS + "."):
        return "tools"
    if module == EXECUTION or module.startswith(EXECUTION + "."):
        return "execution"
    return {"formal": "spec"}.get(module.split(".")[0], module.split(".")[0])


#: Which layers each layer may import.
ALLOWED = {"spec": {"spec"}, "execution": {"spec", "execution"}, "reference": {"spec", "execution", "reference"},
           "proofs": {"spec", "execution", "proofs"}, "tools": {"spec", "execution", "reference", "proofs", "tools"}}


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    G = nx.DiGraph()
    for module in MODULES:
        G.add_node(module)
        G.add_edges_from((module, target) for target in imports(module))
    return G


def test_the_reader_sees_lazy_and_relative_imports(graph):
    """The checks below can fail: the reader finds an import inside a function (the engine's lazy cycle, the
    command line's deferred commands), a relative one, and ``python -m formal``'s import of the front door."""
    assert graph.has_edge("formal.__main__", "formal.tools.cli")
    assert any(graph.has_edge(a, b) for a in ENGINE for b in ENGINE)
    assert ENGINE in [set(c) for c in nx.strongly_connected_components(graph)]
    assert graph.has_edge("formal.graphs.specs", "formal.graphs.schema")       # from .schema import …
    assert graph.has_edge("formal.tools.commands.verify", "reference.verification.verify")   # inside a function


def test_no_import_cycle_but_the_engines(graph):
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1 and not set(c) <= ENGINE]
    assert not cycles, f"import cycles outside the engine: {cycles}"


def test_the_engines_cycle_is_every_file_it_names(graph):
    """:data:`ENGINE` names the cycle's files, no more: a file that leaves it is taken off the list."""
    (cycle,) = [set(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert cycle == ENGINE, f"the engine's cycle is {sorted(cycle)}"


def test_the_layers_point_one_way(graph):
    """spec → reference, proofs → tools: no arrow from the spec to a tool, to reference or to proofs, none
    from reference or proofs to a tool, none between reference and proofs."""
    offenders = sorted(f"{a} -> {b}" for a, b in graph.edges if layer(b) not in ALLOWED[layer(a)])
    assert not offenders, f"imports against the layering: {offenders}"


def test_the_layering_check_catches_a_planted_arrow(graph):
    """The check above can fail: an arrow planted from the spec to a tool, or from reference to a tool, is
    caught."""
    planted = graph.copy()
    planted.add_edge("formal.engine.render", "formal.tools.cli")
    planted.add_edge("reference.records", "formal.tools.claims.claim")
    planted.add_edge("proofs.theorem", "reference.records")
    planted.add_edge("reference.execution.workers", "reference.records")
    found = {(a, b) for a, b in planted.edges if layer(b) not in ALLOWED[layer(a)]}
    assert {("formal.engine.render", "formal.tools.cli"), ("reference.records", "formal.tools.claims.claim"),
            ("proofs.theorem", "reference.records"), ("reference.execution.workers", "reference.records")} <= found
    assert ("proofs.mutation", "reference.execution.protocol") in graph.edges     # the one arrow proofs → reference


def test_nothing_imports_the_cli_but_main(graph):
    importers = sorted(set(graph.predecessors("formal.tools.cli")) - FRONT_DOORS)
    assert not importers, f"formal.tools.cli is imported by {importers}"


def test_the_old_names_import_nothing_but_the_tools_they_name(graph):
    """The deprecated aliases only forward: each imports the tool it names, and nothing imports them."""
    for old, new in DEPRECATED.items():
        assert set(graph.successors(old)) == {new}, (old, sorted(graph.successors(old)))
        assert not list(graph.predecessors(old)), (old, sorted(graph.predecessors(old)))


def test_nothing_but_the_command_line_imports_the_argument_types(graph):
    """The argument types are the command line's: a command (formal.tools.commands) or the front door uses
    them, nothing of the spec, reference or proofs — nor the claims checker or the Sphinx extension."""
    command_line = {"formal.tools.cli"} | {m for m in MODULES if m.startswith("formal.tools.commands")}
    importers = sorted(set(graph.predecessors("formal.tools.arguments")) - command_line)
    assert not importers, f"formal.tools.arguments is imported by {importers}"


def _entry_point_lookups(module: str) -> list:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) in ("entry_points", "iter_entry_points")]


def test_no_entry_point_is_looked_up():
    """The package finds its own parts by importing them: no module looks up an entry point, and the
    distribution declares none but its console script."""
    offenders = {m: lines for m in MODULES if (lines := _entry_point_lookups(m))}
    assert not offenders, f"entry points looked up in {offenders}"
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "[project.entry-points" not in pyproject


def test_the_lookup_check_catches_a_planted_lookup(tmp_path, monkeypatch):
    planted = tmp_path / "planted.py"
    planted.write_text("from importlib.metadata import entry_points\n"
                       "def f():\n    return entry_points(group='formal_transformers.commands')\n")
    monkeypatch.setitem(MODULES, "formal.planted", planted)
    assert _entry_point_lookups("formal.planted") == [3]


def _docstring_misses(package: str) -> list:
    """The modules of ``package``'s folder (and its subpackages) its docstring does not name."""
    path = MODULES[package]
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    folder = path.parent
    names = sorted({p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
                   | {p.parent.name for p in folder.glob("*/__init__.py")})
    return [n for n in names if not re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", doc)]


PACKAGE_MAPS = sorted(m for m, p in MODULES.items() if p.name == "__init__.py" and m.split(".")[0] != "proofs"
                      and (m.startswith(("reference", "formal.tools", "formal.sampling", "formal.engine"))
                           or m == "formal"))


@pytest.mark.parametrize("package", PACKAGE_MAPS)
def test_each_folder_s_docstring_names_every_module(package):
    missing = _docstring_misses(package)
    assert not missing, f"{package}'s docstring does not name {missing}"


def test_the_docstring_check_catches_an_unnamed_module(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text('"""- :mod:`.named` — one."""\n')
    for name in ("named", "unnamed"):
        (tmp_path / "pkg" / f"{name}.py").write_text("")
    monkeypatch.setitem(MODULES, "pkg", tmp_path / "pkg" / "__init__.py")
    assert _docstring_misses("pkg") == ["unnamed"]


def test_no_folder_of_reference_holds_more_than_a_concept():
    folders = {}
    for module, path in MODULES.items():
        if module.startswith("reference.") and path.name != "__init__.py":
            folders.setdefault(module.rpartition(".")[0], []).append(module)
    crowded = {f: len(m) for f, m in folders.items() if len(m) > MAX_MODULES and f not in FAMILY_FOLDERS}
    assert not crowded, f"folders of reference over {MAX_MODULES} modules: {crowded}"


#: What starts a process or a pool of them, or interrupts a thread from outside: the execution layer's alone.
STARTS = {("subprocess", "Popen"), ("subprocess", "run"), ("subprocess", "call"), ("subprocess", "check_call"),
          ("subprocess", "check_output"), ("os", "fork"), ("os", "posix_spawn"), ("os", "system"),
          ("multiprocessing", "Process"), ("multiprocessing", "Pool"), ("multiprocessing", "get_context"),
          ("futures", "ProcessPoolExecutor"), ("futures", "ThreadPoolExecutor"),
          ("pythonapi", "PyThreadState_SetAsyncExc")}


def _starts(module: str) -> list:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute)):
            owner = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
            if (owner, node.attr) in STARTS:
                found.append(f"{owner}.{node.attr}:{node.lineno}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            found += [f"{node.module}.{a.name}:{node.lineno}" for a in node.names
                      if (node.module.rpartition(".")[2], a.name) in STARTS]
    return found


def test_only_the_execution_layer_starts_processes():
    """One way to run work elsewhere: every process (a worker, a child for one function) and every pool is
    started by :mod:`reference.execution`; no thread is interrupted by injecting an exception into it."""
    offenders = {m: found for m in MODULES if layer(m) != "execution" and (found := _starts(m))}
    assert not offenders, f"processes or pools started outside reference.execution: {offenders}"


def test_the_start_check_catches_a_planted_popen(tmp_path, monkeypatch):
    planted = tmp_path / "planted.py"
    planted.write_text("import subprocess\nfrom concurrent.futures import ThreadPoolExecutor\nimport ctypes\n"
                       "def f():\n    subprocess.Popen(['true'])\n"
                       "    ctypes.pythonapi.PyThreadState_SetAsyncExc(0, None)\n")
    monkeypatch.setitem(MODULES, "formal.planted", planted)
    assert sorted(_starts("formal.planted")) == ["concurrent.futures.ThreadPoolExecutor:2",
                                                 "pythonapi.PyThreadState_SetAsyncExc:6", "subprocess.Popen:5"]


@pytest.mark.parametrize("old, new, names", [("formal.sphinx", "formal.tools.sphinx", ["setup"]),
                                             ("formal.claims", "formal.tools.claims", ["check_file", "check_text"]),
                                             ("formal.cli", "formal.tools.cli", ["main"])])
def test_an_old_name_still_works_and_says_where_the_tool_is(old, new, names):
    import importlib
    import sys
    import warnings
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    target = importlib.import_module(new)
    assert all(getattr(module, n) is getattr(target, n) for n in names)
    assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message) for w in caught)
