"""The package's architecture, read from its source: which module imports which (top-level and inside
functions alike, read with ``ast``: nothing is imported), and how long each module is.

- no import cycle but the engine's (``formal.engine``'s algorithm, calls, derivation and execution, with the
  executor's lines and columns, import each other lazily by design);
- nothing imports ``formal.cli`` (the front door) but ``formal/__main__.py``; the commands share their
  argument types through ``formal.arguments``;
- ``formal`` imports nothing of ``reference`` or ``proofs``, not even inside a function (``reference`` and
  ``proofs`` are found through entry points);
- no module of ``formal``, ``reference`` or ``proofs`` is over 400 lines.

Each assertion names the offending modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("formal", "reference", "proofs")
#: The one cycle allowed: the engine's modules import each other lazily by design.
ENGINE = {"formal.engine.algorithm", "formal.engine.calls", "formal.engine.derivation", "formal.engine.execution",
          "formal.engine.lines", "formal.engine.columns", "formal.engine.tape", "formal.engine.batches"}
MAX_LINES = 400


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


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    G = nx.DiGraph()
    for module in MODULES:
        G.add_node(module)
        G.add_edges_from((module, target) for target in imports(module))
    return G


def test_the_reader_sees_lazy_and_relative_imports(graph):
    """The checks below can fail: the reader finds an import inside a function (the engine's lazy cycle),
    a relative one, and ``python -m formal``'s import of the front door."""
    assert graph.has_edge("formal.__main__", "formal.cli")
    assert any(graph.has_edge(a, b) for a in ENGINE for b in ENGINE)
    assert ENGINE in [set(c) for c in nx.strongly_connected_components(graph)]
    assert graph.has_edge("formal.graphs.specs", "formal.graphs.schema")       # from .schema import …


def test_no_import_cycle_but_the_engines(graph):
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1 and not set(c) <= ENGINE]
    assert not cycles, f"import cycles outside the engine: {cycles}"


def test_nothing_imports_the_cli_but_main(graph):
    importers = sorted(set(graph.predecessors("formal.cli")) - {"formal.__main__"})
    assert not importers, f"formal.cli is imported by {importers} (shared argument types are formal.arguments)"


def test_formal_imports_nothing_of_reference_or_proofs(graph):
    offenders = sorted(f"{a} -> {b}" for a, b in graph.edges
                       if a.split(".")[0] == "formal" and b.split(".")[0] in ("reference", "proofs"))
    assert not offenders, f"formal imports reference or proofs: {offenders}"


def test_no_module_is_over_400_lines():
    long = {str(p.relative_to(ROOT)): n for p in MODULES.values()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"
