"""No import cycles among our own modules (dos_engine, dos_server, dos_client).

Every ``import`` and ``from ... import`` under server/ and client/ counts: at module level,
inside functions (the imports deferred to break a cycle at run time still make one) and under
``TYPE_CHECKING``. ``from package import name`` is an import of ``package.name`` when that is
a module of ours, else of ``package``; relative imports are resolved against the importing
module. Importing ``a.b.c`` is an edge to ``a.b.c`` only, not to the packages above it.
"""

from __future__ import annotations

import ast
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "server", ROOT / "client")
OURS = ("dos_engine", "dos_server", "dos_client")


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` at ``path:line`` (``where``: module level, a function,
    TYPE_CHECKING)."""

    source: str
    target: str
    path: str
    line: int
    where: str


def _modules() -> dict[str, Path]:
    """Every module of ours, by dotted name."""
    found: dict[str, Path] = {}
    for source in SOURCES:
        for path in sorted(source.rglob("*.py")):
            parts = path.relative_to(source).with_suffix("").parts
            if parts[0] not in OURS:
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


class _Imports(ast.NodeVisitor):
    """The imports of one module, each with where it runs."""

    def __init__(self, name: str, is_package: bool, modules: dict[str, Path], path: str) -> None:
        self.name, self.package = name, name if is_package else name.rpartition(".")[0]
        self.modules, self.path = modules, path
        self.edges: list[Edge] = []
        self._scope: list[str] = []

    def _add(self, target: str, node: ast.stmt) -> None:
        if target in self.modules and target != self.name:
            where = self._scope[-1] if self._scope else "module level"
            self.edges.append(Edge(self.name, target, self.path, node.lineno, where))

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._scope.append(f"in {node.name}()")
        self.generic_visit(node)
        self._scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        typing_only = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
        if not typing_only:
            self.generic_visit(node)
            return
        self._scope.append("under TYPE_CHECKING")
        for child in node.body:
            self.visit(child)
        self._scope.pop()
        for child in node.orelse:
            self.visit(child)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")
            base = base[:len(base) - (node.level - 1)]
            package = ".".join(base + ([node.module] if node.module else []))
        else:
            package = node.module or ""
        for alias in node.names:
            submodule = f"{package}.{alias.name}"
            self._add(submodule if submodule in self.modules else package, node)


def import_graph() -> dict[str, list[Edge]]:
    """Each module of ours and the imports of ours it makes."""
    modules = _modules()
    graph: dict[str, list[Edge]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        visitor = _Imports(name, path.name == "__init__.py", modules, str(path.relative_to(ROOT)))
        visitor.visit(tree)
        graph[name] = visitor.edges
    return graph


def _components(graph: dict[str, list[Edge]]) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted({e.target for e in graph[root]})))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted({e.target for e in graph[target]}))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(component)
    return found


def _shortest_path(graph: dict[str, list[Edge]], start: str, goal: str,
                   within: set[str]) -> list[Edge]:
    """The fewest imports leading from ``start`` to ``goal`` inside ``within``."""
    came: dict[str, Edge | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            break
        for edge in sorted(graph[node], key=lambda e: e.target):
            if edge.target in within and edge.target not in came:
                came[edge.target] = edge
                queue.append(edge.target)
    path: list[Edge] = []
    node = goal
    while (step := came[node]) is not None:
        path.append(step)
        node = step.source
    return path[::-1]


def cycles(graph: dict[str, list[Edge]]) -> list[list[Edge]]:
    """Import cycles that together use every import inside a cycle: for each such import,
    the shortest way back to its module (each cycle once)."""
    out: list[list[Edge]] = []
    seen: set[tuple[str, ...]] = set()
    for component in _components(graph):
        for source in sorted(component):
            for edge in graph[source]:
                if edge.target not in component:
                    continue
                cycle = [edge, *_shortest_path(graph, edge.target, source, component)]
                names = [e.source for e in cycle]
                turn = names.index(min(names))
                key = tuple(names[turn:] + names[:turn])
                if key not in seen:
                    seen.add(key)
                    out.append(cycle)
    return out


def describe(cycle: list[Edge]) -> str:
    chain = " -> ".join([e.source for e in cycle] + [cycle[0].source])
    steps = "".join(f"\n    {e.source} -> {e.target}: {e.path}:{e.line} ({e.where})"
                    for e in cycle)
    return chain + steps


def test_the_graph_sees_every_kind_of_import() -> None:
    """The walk finds imports at module level, inside functions and under TYPE_CHECKING, and
    resolves ``from package import module`` and relative imports to the module."""
    graph = import_graph()
    assert {"dos_engine", "dos_server", "dos_client"} <= set(graph)
    client = {(e.target, e.where) for e in graph["dos_client.context"]}
    assert ("dos_client.config", "module level") in client
    assert ("dos_client.api", "under TYPE_CHECKING") in client
    assert any(where.startswith("in ") and target == "dos_client.api"
               for target, where in client)
    cli = {e.target for e in graph["dos_client.cli"]}
    assert "dos_client.commands.lobby" in cli  # `from dos_client.commands import lobby`


def test_cycles_are_found_and_each_told_once() -> None:
    def edge(source: str, target: str) -> Edge:
        return Edge(source, target, f"{source}.py", 1, "module level")

    graph = {"a": [edge("a", "b"), edge("a", "d")], "b": [edge("b", "c")],
             "c": [edge("c", "a"), edge("c", "b")], "d": []}
    assert sorted(" -> ".join(e.source for e in cycle) for cycle in cycles(graph)) == \
        ["a -> b -> c", "b -> c"]


@pytest.mark.parametrize("package", OURS)
def test_no_import_cycles(package: str) -> None:
    found = [c for c in cycles(import_graph()) if c[0].source.split(".")[0] == package]
    assert not found, f"{len(found)} import cycle(s) in {package}:\n" + "\n".join(
        describe(c) for c in found)
