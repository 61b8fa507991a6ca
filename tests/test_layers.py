"""The package's layers (docs/DESIGN.md): core → engine → study/db/match → app → online → web → cli, each
importing only its own layer and the ones below, and no import circle between packages.

The imports are read from the source with :mod:`ast` (nothing is imported): module-level and
function-level imports both count; imports under ``if TYPE_CHECKING:`` are left out (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "src" / "xiangqi"

#: Layer of each top-level package, lowest first (docs/DESIGN.md's diagram). study, db and match share one.
LAYERS = {"core": 0, "engine": 1, "study": 2, "db": 2, "match": 2, "app": 3, "online": 4, "web": 5, "cli": 6}
#: Modules at the package root: the public facade and the data-dir helper sit with core (they import
#: only core, or nothing of ours); ``python -m xiangqi`` is the command line.
ROOT_MODULES = {"xiangqi": 0, "xiangqi.datadir": 0, "xiangqi.__main__": 6}

#: The subpackages of app, lowest first (docs/DESIGN.md, "The app's packages"): each imports only its
#: own and lower ones; training and library share a level, so neither imports the other.
APP_ORDER = {"tasks": 0, "opponents": 1, "play": 2, "training": 3, "library": 3}

#: Import circles among the modules of one package that are still to be broken (issue 30). The list
#: may only shrink: a new circle, or one across packages, fails the test.
KNOWN_CIRCLES = [
]


def module_files() -> dict[str, Path]:
    """Dotted module name → source file, for every module of src/xiangqi (a package is its
    ``__init__.py``)."""
    out: dict[str, Path] = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """The ids of every node under an ``if TYPE_CHECKING:`` block."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                ids.update(id(n) for n in ast.walk(inner))
    return ids


def import_graph() -> dict[str, set[str]]:
    """Module → the modules of ours it imports (at any depth of the file, TYPE_CHECKING left out).
    ``from a.b import c`` counts as importing ``a.b.c`` when that is a module, else ``a.b``."""
    mods = module_files()
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        skip = _type_checking_nodes(tree)
        targets: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                wanted = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        package = package.rpartition(".")[0]
                    base = f"{package}.{base}" if base else package
                wanted = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            for target in wanted:
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def layer(module: str) -> int:
    """The layer number of a module (:data:`LAYERS`); KeyError for a module in no layer."""
    if module in ROOT_MODULES:
        return ROOT_MODULES[module]
    return LAYERS[module.split(".")[1]]


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = set()
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        comp.add(m)
                        if m == node:
                            break
                    if len(comp) > 1:
                        found.append(comp)
    return found


def test_the_graph_reader_sees_function_level_imports_and_skips_type_checking():
    graph = import_graph()
    # app/training/coach.py imports app/opponents/players.py inside functions only.
    assert "xiangqi.app.opponents.players" in graph["xiangqi.app.training.coach"]
    # app/play/hub.py imports web.clients under TYPE_CHECKING only.
    assert "xiangqi.web.clients" not in graph["xiangqi.app.play.hub"]
    assert "xiangqi.core.board" in graph["xiangqi.app.play.hub"]


def test_every_module_is_in_a_layer():
    unplaced = []
    for module in import_graph():
        try:
            layer(module)
        except KeyError:
            unplaced.append(module)
    assert unplaced == []


def test_no_module_imports_a_higher_layer():
    graph = import_graph()
    upward = sorted(
        f"{a} -> {b}" for a, targets in graph.items() for b in targets if layer(b) > layer(a)
    )
    assert upward == []


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert circles({"a": {"b"}, "b": set()}) == []


def units(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between the parts of each package: a module is counted as the subpackage or
    module directly under its top-level package (``xiangqi.app.play.hub`` is ``xiangqi.app.play``),
    and only the edges between two parts of the same top-level package are kept."""
    def unit(module: str) -> str:
        return ".".join(module.split(".")[:3])

    def package(module: str) -> str:
        return ".".join(module.split(".")[:2])

    out: dict[str, set[str]] = {}
    for a, targets in graph.items():
        ua = unit(a)
        out.setdefault(ua, set())
        for b in targets:
            ub = unit(b)
            if ub != ua and package(ub) == package(ua):
                out[ua].add(ub)
    return out


def test_no_import_circle_between_the_subpackages_of_a_package():
    # A circle of modules in two subpackages (app/play/hub.py -> app/training/coach.py -> app/play/...)
    # is a circle of modules too, but one of subpackages shows where the one-way order broke: the
    # subpackages of a package (app's play, opponents, training, ...) import each other one way.
    assert circles(units(import_graph())) == []
    two = {"xiangqi.app.a.x": {"xiangqi.app.b.y"}, "xiangqi.app.b.y": {"xiangqi.app.a.z"},
           "xiangqi.app.a.z": set()}
    assert circles(units(two)) == [{"xiangqi.app.a", "xiangqi.app.b"}]


def test_every_app_module_is_in_a_subpackage_and_they_import_one_way():
    graph = import_graph()
    app = {m for m in graph if m.startswith("xiangqi.app.")}
    unplaced = sorted(m for m in app if m.split(".")[2] not in APP_ORDER)
    assert unplaced == []
    wrong = sorted(
        f"{a} -> {b}" for a in app for b in graph[a]
        if b in app and b.split(".")[2] != a.split(".")[2]
        and APP_ORDER[b.split(".")[2]] >= APP_ORDER[a.split(".")[2]]
    )
    assert wrong == []


def test_the_design_documents_tree_lists_every_package():
    # docs/DESIGN.md, "The package tree": one line per package of src/xiangqi ("app/play/  purpose").
    text = (ROOT.parent.parent / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    block = text.split("<!-- package tree -->\n```\n", 1)[1].split("```", 1)[0]
    listed = {line.split()[0].rstrip("/") for line in block.splitlines() if line and not line[0].isspace()}
    packages = {"/".join(p.parent.relative_to(ROOT).parts) or "xiangqi" for p in ROOT.rglob("__init__.py")}
    assert listed == packages


def test_no_import_circle_across_packages_and_no_new_one_inside():
    found = circles(import_graph())
    across = [sorted(c) for c in found if len({m.split(".")[:2][-1] for m in c}) > 1]
    assert across == []
    new = [sorted(c) for c in found if c not in KNOWN_CIRCLES]
    assert new == []
    broken = [sorted(c) for c in KNOWN_CIRCLES if c not in found]
    assert broken == [], "a known circle is gone: take it off KNOWN_CIRCLES"
