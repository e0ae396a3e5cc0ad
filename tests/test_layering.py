"""The package's modules import each other without cycles, and none imports another of its own
modules inside a function (the usual way to hide a cycle)."""
from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "econarena_evals"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def resolve(module: str, node: ast.ImportFrom, is_package: bool) -> list[str]:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if node.level:
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if not target.startswith("econarena_evals"):
        return []
    names = [f"{target}.{a.name}" for a in node.names]
    return names + [target]


def graph() -> tuple[dict[str, set[str]], list[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges: dict[str, set[str]] = {m: set() for m in modules}
    local: list[str] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = set(map(id, tree.body))
        type_checking = {id(n) for node in tree.body if isinstance(node, ast.If)
                         and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                targets = [t for t in resolve(name, node, path.name == "__init__.py") if t in modules]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name in modules]
            else:
                continue
            if not targets or id(node) in type_checking:
                continue
            if id(node) not in top:
                local.append(f"{name}:{node.lineno} imports {', '.join(targets)}")
            edges[name].update(t for t in targets if t != name)
    return edges, local


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    found, state, stack = [], {}, []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                found.append(stack[stack.index(n):] + [n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)
    return found


def test_no_import_cycles_between_the_package_s_modules():
    edges, _ = graph()
    # a package's __init__ re-exporting its modules is not a cycle of the modules themselves
    for m in edges:
        edges[m] = {n for n in edges[m] if not (m.startswith(n + ".") and n + ".__init__" not in edges)}
    assert cycles(edges) == []


def test_no_function_local_imports_of_the_package_s_own_modules():
    _, local = graph()
    assert local == []


def test_the_data_modules_import_nothing_from_the_games():
    edges, _ = graph()
    for data in ("econarena_evals.core.sessions", "econarena_evals.core.outcome", "econarena_evals.core.prompts"):
        assert not any(t.startswith("econarena_evals.games") for t in edges[data]), data


# The folders from the bottom layer up (econarena_evals/__init__.py): a module may import its own
# folder and the folders before its own, never one after it.
LAYERS = ("core", "games", "score", "calls", "fns", "integration", "log", "run", "on_inspect", "on_verifiers", "report")
# Folders whose modules must not import evals at all: the pure core, the call engine, and the
# inspect_ai and verifiers front ends (installed without evals).
WITHOUT_EVALS = ("core", "games", "score", "calls", "on_inspect", "on_verifiers")


def folder(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in LAYERS) else ""


def test_every_module_sits_in_a_folder_of_the_layering():
    edges, _ = graph()
    flat = [m for m in edges if m != "econarena_evals" and folder(m) not in LAYERS]
    assert flat == []
    assert sorted({folder(m) for m in edges if m != "econarena_evals"}) == sorted(LAYERS)


def test_no_folder_imports_a_folder_above_its_own():
    edges, _ = graph()
    upward = []
    for m, targets in edges.items():
        if m == "econarena_evals":
            continue
        for t in targets:
            if t != "econarena_evals" and LAYERS.index(folder(t)) > LAYERS.index(folder(m)):
                upward.append(f"{m} imports {t}")
    assert upward == []


def test_the_core_the_games_the_scores_and_the_call_engine_import_no_evals():
    found = []
    for path in PACKAGE.rglob("*.py"):
        if folder(module_name(path)) not in WITHOUT_EVALS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            found += [f"{module_name(path)} imports {n}" for n in names if n == "evals" or n.startswith("evals.")]
    assert found == []


def evals_private_names() -> set[str]:
    """Every private name evals defines (``_x``, not ``__x__``): functions, classes, module names and
    attributes it sets on its objects."""
    import warnings

    import evals

    names: set[str] = set()
    for path in Path(evals.__file__).parent.rglob("*.py"):
        with warnings.catch_warnings():  # evals' own invalid escape sequences are not ours to report
            warnings.simplefilter("ignore")
            tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
    return {n for n in names if n.startswith("_") and not n.endswith("__")}


def test_only_integration_names_evals_private_attributes():
    """integration/ is the one door to evals' insides: an evals upgrade touches one folder."""
    private = evals_private_names()
    assert {"_flush_events_internal", "_index_samples", "_flushes_done"} <= private  # the check sees them
    found = []
    for path in PACKAGE.rglob("*.py"):
        if "integration" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in private and not (
                    isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("evals"):
                found += [f"{path.relative_to(ROOT)}:{node.lineno} imports {a.name}" for a in node.names
                          if a.name in private]
    assert found == []
