"""Imports go one way between the layers of the README's picture: a lower layer never
imports a higher one (parsed with ``ast``: every import, including those inside functions;
imports under ``if TYPE_CHECKING:`` carry no run-time dependency and are skipped)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tokenparse"

#: layer of each module or package, lowest first; a module may import its own layer and below
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("shared", ("tokenparse.errors", "tokenparse.core", "tokenparse.limits", "tokenparse.token_ids",
                "tokenparse._speedups")),
    ("tokenizers", ("tokenparse.tokenizers",)),
    ("channels", ("tokenparse.channels",)),
    ("routing", ("tokenparse.routing",)),
    ("payload grammars", ("tokenparse.tools", "tokenparse.json")),
    ("assembly", ("tokenparse.assembly", "tokenparse.toolset", "tokenparse.messages")),
    ("registry", ("tokenparse.dialects", "tokenparse.detection")),
    # the API and the features its objects offer as methods (Model.parse_batch, Parser.snapshot,
    # Model.structural_tag)
    ("api", ("tokenparse.api", "tokenparse.batch", "tokenparse.snapshot", "tokenparse.grammars")),
    # adapters, CLI, explain, the package's own __init__, and any module not listed above
    ("application", ("tokenparse.adapters", "tokenparse.cli", "tokenparse.explain", "tokenparse")),
    ("integrations", ("tokenparse.integrations",)),
]


def layer_of(module: str) -> int:
    best, best_len = len(LAYERS) - 2, 0  # unlisted modules sit with the application
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".") or module.startswith(prefix + "_")) and len(
                prefix
            ) > best_len:
                best, best_len = rank, len(prefix)
    return best


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_only(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
        or (isinstance(test, ast.Constant) and test.value is False)
    )


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every tokenparse import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if _type_checking_only(node):
            for child in getattr(node, "orelse", []):
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module is not None:
                found.append((node.lineno, target))
            # "from . import x" / "from .pkg import mod": the names may be submodules
            for alias in node.names:
                if alias.name != "__version__":  # package metadata, not a layer
                    found.append((node.lineno, f"{target}.{alias.name}"))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return [(line, name) for line, name in found if name == "tokenparse" or name.startswith("tokenparse.")]


MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


def test_every_module_is_checked():
    assert len(MODULES) > 40


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_imports_go_down_the_layers(path):
    here = module_name(path)
    mine = layer_of(here)
    wrong = [
        f"line {line}: {here} ({LAYERS[mine][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for line, target in imports_of(path)
        if layer_of(target) > mine
    ]
    assert not wrong, "\n".join(wrong)


def test_the_checker_sees_a_violation(tmp_path):
    """A lower module importing a higher one is reported (the test can fail)."""
    assert layer_of("tokenparse.channels.tags") < layer_of("tokenparse.routing.tags")
    assert layer_of("tokenparse.core") < layer_of("tokenparse.tokenizers.table")
    assert layer_of("tokenparse.cli.formats") == layer_of("tokenparse.cli")
    assert layer_of("tokenparse.dialects.registry") > layer_of("tokenparse.tools.glm")
    imports = imports_of(PACKAGE / "routing" / "tags.py")
    assert any(target == "tokenparse.channels.tags" for _, target in imports)


def test_layout_page_matches_the_tree():
    """The docs' Layout page lists every module (packages' ``__init__`` aside), the C sources of
    the optional extension, and nothing else."""
    readme = (PACKAGE.parent / "docs" / "layout.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Layout") :]
    block = section[section.index("```") + 3 :]
    block = block[: block.index("```")]
    entries = [line.split()[0] for line in block.splitlines() if line.strip()]
    assert len(entries) == len(set(entries)), "a module is listed twice"
    listed = set(entries)
    listed_dirs = {entry for entry in listed if entry.endswith("/")}
    actual = {
        str(p.relative_to(PACKAGE.parent))
        for p in [*MODULES, *sorted(PACKAGE.rglob("*.c"))]
        if p.name not in ("__init__.py", "__main__.py") and not any(str(p.relative_to(PACKAGE.parent)).startswith(d) for d in listed_dirs)
    }
    assert sorted(actual - listed) == [], "modules missing from docs/layout.md"
    stale = sorted(e for e in listed - actual - listed_dirs)
    assert stale == [], "Layout entries that are not modules"
    for directory in listed_dirs:
        assert (PACKAGE.parent / directory).is_dir(), directory


# -- no import circles, no module groups by prefix or age ------------------------------------

BENCHMARKS = PACKAGE.parent / "benchmarks"


def _all_imports(path: Path, package_name: str | None) -> set[str]:
    """Every module ``path`` imports (``TYPE_CHECKING`` blocks and function bodies included:
    a circle through an annotation or a lazy import is still a circle to a reader)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                assert package_name is not None, path
                base = package_name.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the modules of ``tokenparse/`` and ``benchmarks/`` it imports. ``from pkg
    import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``."""
    modules: dict[str, Path] = {module_name(p): p for p in MODULES}
    modules.update({p.stem: p for p in sorted(BENCHMARKS.glob("*.py"))})
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = (name if path.name == "__init__.py" else name.rpartition(".")[0]) if path.is_relative_to(PACKAGE) else None
        targets = set()
        for target in _all_imports(path, package):
            if target in modules:
                targets.add(target)
        # "from pkg import sub" names both pkg and pkg.sub: keep the submodule only
        graph[name] = {t for t in targets if not any(o.startswith(t + ".") for o in targets)} - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (a list of modules, first == last), or ``None``."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_circles():
    graph = import_graph()
    assert "tokenparse.adapters._chat_wire" in graph and "bench_wire" in graph
    cycle = find_cycle(graph)
    assert cycle is None, " -> ".join(cycle or ())


def test_the_circle_finder_finds_circles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
    # an annotation-only import counts: the wire module naming its stream class did
    graph = import_graph()
    graph["tokenparse.adapters._chat_wire"].add("tokenparse.adapters.openai_chat")
    assert find_cycle(graph) is not None


#: names that say when a module was written rather than what it holds
AGE_WORDS = ("more", "recent", "new", "old", "legacy", "extra", "misc", "v2")


def _top_level(directory: Path) -> list[str]:
    return sorted(p.stem for p in directory.glob("*.py") if p.stem not in ("__init__", "__main__"))


@pytest.mark.parametrize("directory", [PACKAGE, BENCHMARKS], ids=["tokenparse", "benchmarks"])
def test_no_top_level_module_groups(directory):
    """A top-level module with satellites (``cli.py`` + ``cli_batch.py``...) is a package
    waiting to be made; a name that tells the age of a module says nothing of what it does."""
    names = _top_level(directory)
    groups = {base: [n for n in names if n.startswith(base + "_")] for base in names}
    assert {base: members for base, members in groups.items() if members} == {}
    aged = [n for n in names if set(n.strip("_").split("_")) & set(AGE_WORDS)]
    assert aged == []


def test_no_module_is_named_by_its_age():
    aged = [str(p.relative_to(PACKAGE.parent)) for p in MODULES
            if set(p.stem.strip("_").split("_")) & set(AGE_WORDS)]
    assert aged == []
