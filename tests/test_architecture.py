"""The shape of src/torchsmith, checked from its source (ast only: nothing is imported or run).

- no import cycle among torchsmith modules, lazy (function-level) imports included (imports
  under ``if TYPE_CHECKING:`` never run, and do not count);
- no module over MAX_MODULE_LINES lines, no function over MAX_FUNCTION_LINES lines (snippets too);
- no ``Any`` on a parameter or attribute whose name says it holds one of our own types, nor as
  the return type of a function so named;
- ruff's banned-api rule covers every way out to the OS that must go through a Host.

Each check names today's known offenders in an explicit allowlist (areas still being reworked);
an allowlisted item that no longer offends fails the test too, so the lists only shrink.
"""

from __future__ import annotations

import ast
import os
import sys
from typing import Dict, Iterator, List, Optional, Set, Tuple, Union

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.8 to 3.10
    import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
PACKAGE = "torchsmith"

MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60

# Known offenders: none. An entry here must name a real offender (the checks fail on a stale one),
# so these lists can only shrink; fix a new offender rather than list it.
CYCLE_ALLOWLIST: Set[str] = set()  # modules of a cycle; the cycle is printed when it fails
MODULE_ALLOWLIST: Set[str] = set()
FUNCTION_ALLOWLIST: Set[str] = set()  # "module:qualified.name"
ANY_ALLOWLIST: Set[str] = set()  # "module:function.parameter" or "module:Class.attribute"
PER_FILE_ALLOWLIST: Set[str] = set()  # src files besides host/live.py exempt from TID251

# A name that says "one of our own types": a parameter or attribute so named must not be `Any`.
OWN_TYPE_NAMES = {
    "kb": "KnowledgeBase", "machine": "Machine", "variant": "VariantBuild", "release": "TorchRelease",
    "plan": "Plan", "host": "Host", "target": "a target type", "ctx": "Context", "context": "a context",
    "request": "PlanRequest", "report": "a report type", "profile": "a profile type",
    "described": "DescribedMachine", "snapshot": "a snapshot type", "inspection": "an inspection",
    "env_report": "an inspection", "gpu": "Gpu", "platform": "PlatformInfo", "result": "a result type",
    "installer": "Installer", "options": "an options type", "catalog": "a catalog type",
}
OWN_TYPE_SUFFIXES = ("_kb", "_machine", "_variant", "_release", "_plan", "_host", "_ctx", "_request")


def _modules() -> Dict[str, str]:
    """Dotted module name -> file path, for every module of the package."""
    found: Dict[str, str] = {}
    for directory, _dirs, files in os.walk(os.path.join(SRC, PACKAGE)):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            rel = os.path.relpath(path, SRC)[: -len(".py")].split(os.sep)
            if rel[-1] == "__init__":
                rel = rel[:-1]
            found[".".join(rel)] = path
    return found


MODULES = _modules()
_TREES: Dict[str, ast.Module] = {}


def _tree(module: str) -> ast.Module:
    if module not in _TREES:
        with open(MODULES[module], encoding="utf-8") as handle:
            _TREES[module] = ast.parse(handle.read(), MODULES[module])
    return _TREES[module]


def _is_package(module: str) -> bool:
    return MODULES[module].endswith("__init__.py")


def _own(name: str) -> Optional[str]:
    """The torchsmith module ``name`` is or lives in (``a.b.func`` -> ``a.b``), else None."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node that can run: ``if TYPE_CHECKING:`` blocks (typing only) are left out."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for other in node.orelse:
                yield other
                yield from _runtime_nodes(other)
            continue
        yield node
        yield from _runtime_nodes(node)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imported(module: str) -> Set[str]:
    """The torchsmith modules ``module`` imports anywhere it can run (lazy imports included)."""
    out: Set[str] = set()
    package = module if _is_package(module) else module.rpartition(".")[0]
    for node in _runtime_nodes(_tree(module)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _own(alias.name)
                if target:
                    out.add(target)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                # `from torchsmith.kb import refresh` imports the submodule when there is one.
                target = _own(f"{base}.{alias.name}") or _own(base)
                if target:
                    out.add(target)
    out.discard(module)
    return out


def _graph() -> Dict[str, Set[str]]:
    """Who imports whom. Importing ``a.b.c`` runs ``a/__init__`` and ``a.b/__init__`` too."""
    graph: Dict[str, Set[str]] = {}
    for module in MODULES:
        edges = set()
        for target in _imported(module):
            edges.add(target)
            parent = target.rpartition(".")[0]
            while parent and parent != PACKAGE:
                # A module's own package is already running when it imports a sibling.
                if not module.startswith(parent + ".") and parent in MODULES:
                    edges.add(parent)
                parent = parent.rpartition(".")[0]
        edges.discard(module)
        graph[module] = edges
    return graph


def _cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    on_stack: Set[str] = set()
    stack: List[str] = []
    found: List[List[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: List[Tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _path_in(graph: Dict[str, Set[str]], members: Set[str]) -> str:
    """One concrete cycle through ``members``, for the failure message."""
    start = min(members)
    previous: Dict[str, str] = {}
    frontier = [start]
    while frontier:
        node = frontier.pop(0)
        for child in sorted(graph[node] & members):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return " -> ".join([*reversed(path), start])
            if child not in previous:
                previous[child] = node
                frontier.append(child)
    return ", ".join(sorted(members))


_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[Tuple[str, _Function]]:
    """(qualified name, node) of every function, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}{node.name}"
            yield name, node
            yield from _functions(node, f"{name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")
        else:
            yield from _functions(node, prefix)


def _length(node: _Function) -> int:
    """Lines from the ``def`` (decorators excluded) to the function's last line."""
    assert node.end_lineno is not None
    return node.end_lineno - node.lineno + 1


def _is_any(annotation: Optional[ast.expr]) -> bool:
    """True for a bare ``Any`` (``typing.Any``, ``"Any"``, ``Optional[Any]``), not ``Dict[str, Any]``."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return False
    if isinstance(annotation, ast.Name):
        return annotation.id == "Any"
    if isinstance(annotation, ast.Attribute):
        return annotation.attr == "Any"
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name):
        inner = annotation.slice
        inner = getattr(inner, "value", inner)  # ast.Index on 3.8
        if annotation.value.id == "Optional":
            return _is_any(inner)
        if annotation.value.id == "Union" and isinstance(inner, ast.Tuple):
            return any(_is_any(e) for e in inner.elts if not _is_none(e))
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _is_any(annotation.left) or _is_any(annotation.right)
    return False


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _names_own_type(name: str) -> bool:
    bare = name.lstrip("_")
    return bare in OWN_TYPE_NAMES or bare.endswith(OWN_TYPE_SUFFIXES)


def _any_annotations(module: str) -> Iterator[str]:
    """``function.parameter`` / ``Class.attribute`` entries annotated ``Any`` under an own-type name,
    and ``function->return`` for a function so named (``Context.kb()``) that returns ``Any``."""
    for qualname, func in _functions(_tree(module)):
        # Only the exact name for functions: `_from_plan` installs from a plan, it is not one.
        if qualname.rpartition(".")[2].lstrip("_") in OWN_TYPE_NAMES and _is_any(func.returns):
            yield f"{qualname}->return"
        args = func.args
        every = [*getattr(args, "posonlyargs", []), *args.args, *args.kwonlyargs]
        for arg in every:
            if _names_own_type(arg.arg) and _is_any(arg.annotation):
                yield f"{qualname}.{arg.arg}"
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                        and _names_own_type(item.target.id) and _is_any(item.annotation)):
                    yield f"{node.name}.{item.target.id}"
        elif (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Attribute)
              and isinstance(node.target.value, ast.Name) and node.target.value.id == "self"
              and _names_own_type(node.target.attr) and _is_any(node.annotation)):
            yield f"self.{node.target.attr}"


def _check_allowlist(offenders: Set[str], allowlist: Set[str], what: str) -> None:
    new = sorted(offenders - allowlist)
    fixed = sorted(allowlist - offenders)
    assert not new, f"{what}:\n  " + "\n  ".join(new)
    assert not fixed, f"no longer {what} (remove from the allowlist):\n  " + "\n  ".join(fixed)


def test_no_import_cycle() -> None:
    graph = _graph()
    offenders: Set[str] = set()
    messages: List[str] = []
    for component in _cycles(graph):
        members = set(component)
        if not members <= CYCLE_ALLOWLIST:
            messages.append(f"{_path_in(graph, members)} (all of: {', '.join(component)})")
        offenders |= members
    assert not messages, "import cycles (lazy imports count too):\n  " + "\n  ".join(messages)
    fixed = sorted(CYCLE_ALLOWLIST - offenders)
    assert not fixed, "no longer in a cycle (remove from the allowlist):\n  " + "\n  ".join(fixed)


def test_the_cycle_finder_finds_lazy_cycles() -> None:
    """The check itself: a lazy import closing a loop is a cycle, a one-way chain is not."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _path_in(graph, {"a", "b", "c"}) == "a -> b -> c -> a"
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_imports_only_for_type_checking_are_no_edges() -> None:
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
              "    from torchsmith.kb import KnowledgeBase\nelse:\n    import torchsmith.host\n"
              "def f() -> None:\n    from torchsmith import machine\n")
    MODULES["torchsmith.example"] = MODULES["torchsmith.versions"]
    _TREES["torchsmith.example"] = ast.parse(source)
    try:
        assert _imported("torchsmith.example") == {"torchsmith.host", "torchsmith.machine"}
    finally:
        del MODULES["torchsmith.example"], _TREES["torchsmith.example"]


def test_imports_resolve_relative_and_lazy_imports() -> None:
    """The graph sees imports inside functions: the resolver's lazy imports of the kb are edges."""
    graph = _graph()
    assert "torchsmith.host" in graph["torchsmith.host.live"]
    lazy = [m for m in MODULES for n in ast.walk(_tree(m))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            for i in ast.walk(n) if isinstance(i, ast.ImportFrom) and (i.module or "").startswith(PACKAGE)]
    assert lazy, "expected some function-level imports to check"
    assert all(_own(i) in MODULES for m in MODULES for i in _imported(m))


def test_no_module_over_the_line_limit() -> None:
    offenders = set()
    for module, path in MODULES.items():
        with open(path, encoding="utf-8") as handle:
            if sum(1 for _ in handle) > MAX_MODULE_LINES:
                offenders.add(module)
    _check_allowlist(offenders, MODULE_ALLOWLIST, f"modules over {MAX_MODULE_LINES} lines")


def test_no_function_over_the_line_limit() -> None:
    offenders = set()
    for module in MODULES:
        for qualname, node in _functions(_tree(module)):
            if _length(node) > MAX_FUNCTION_LINES:
                offenders.add(f"{module}:{qualname}")
    _check_allowlist(offenders, FUNCTION_ALLOWLIST, f"functions over {MAX_FUNCTION_LINES} lines")


def test_no_any_for_our_own_types() -> None:
    offenders = {f"{m}:{entry}" for m in MODULES for entry in _any_annotations(m)}
    _check_allowlist(offenders, ANY_ALLOWLIST, "`Any` where the name says one of our types")


@pytest.mark.parametrize(("source", "flagged"), [
    ("def f(kb: Any) -> None: ...", ["f.kb"]),
    ("def f(kb: 'Any') -> None: ...", ["f.kb"]),
    ("def f(kb: Optional[Any] = None) -> None: ...", ["f.kb"]),
    ("def f(*, machine: typing.Any) -> None: ...", ["f.machine"]),
    ("def f(base_kb: Any, kb: KnowledgeBase) -> None: ...", ["f.base_kb"]),
    ("def f(data: Any, rows: Dict[str, Any], kb: Dict[str, Any]) -> None: ...", []),
    ("class C:\n    plan: Any\n    note: Any\n", ["C.plan"]),
    ("class C:\n    def kb(self) -> Any: ...\n    def _from_plan(self) -> Any: ...\n", ["C.kb->return"]),
    ("class C:\n    def __init__(self, x: int) -> None:\n        self.host: Any = x\n", ["self.host"]),
])
def test_the_any_check(source: str, flagged: List[str]) -> None:
    _TREES["<example>"] = ast.parse(source)
    try:
        assert list(_any_annotations("<example>")) == flagged
    finally:
        del _TREES["<example>"]


def test_ruff_bans_every_way_around_the_host() -> None:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as handle:
        ruff = tomllib.load(handle)["tool"]["ruff"]["lint"]
    banned = ruff["flake8-tidy-imports"]["banned-api"]
    for api in ("subprocess", "ctypes", "os.environ", "os.getenv", "os.putenv", "urllib.request"):
        assert api in banned, f"{api} is not in ruff's banned-api"
    assert "TID251" in ruff["select"] or "TID" in ruff["select"]
    # Only the live host may use them in src (snippets run in other interpreters, not torchsmith).
    exempt = {path for path, rules in ruff["per-file-ignores"].items()
              if path.startswith("src/") and ("TID251" in rules or "TID" in rules)}
    assert exempt <= {"src/torchsmith/host/live.py", "src/torchsmith/snippets/*"} | PER_FILE_ALLOWLIST, exempt



def test_ruff_flags_a_way_around_the_host_in_src() -> None:
    """The rule really fires: ruff, run as on src/, reports each banned use (skipped without ruff)."""
    import importlib.util
    import subprocess

    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed (the `lint` extra)")
    source = ("from __future__ import annotations\n\nimport os\nimport subprocess\nimport urllib.request\n\n"
              "HOME = os.environ.get('HOME')\nUSER = os.getenv('USER')\n")
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "TID251", "--output-format",
         "concise", "--stdin-filename", os.path.join("src", "torchsmith", "example.py"), "-"],
        input=source, capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    for api in ("`subprocess`", "`urllib.request`", "`os.environ`", "`os.getenv`"):
        assert api in result.stdout, (api, result.stdout, result.stderr)
    allowed = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "TID251", "--stdin-filename",
         os.path.join("src", "torchsmith", "host", "live.py"), "-"],
        input=source, capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    assert allowed.returncode == 0, allowed.stdout
