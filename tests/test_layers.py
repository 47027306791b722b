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
    ("registry", ("tokenparse.profiles", "tokenparse.dialects", "tokenparse.examples", "tokenparse.detection")),
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
    assert layer_of("tokenparse.cli_formats") == layer_of("tokenparse.cli")
    assert layer_of("tokenparse.profiles") > layer_of("tokenparse.tools.glm")
    imports = imports_of(PACKAGE / "routing" / "tags.py")
    assert any(target == "tokenparse.channels.tags" for _, target in imports)


def test_readme_layout_matches_the_tree():
    """The README's Layout lists every module (packages' ``__init__`` aside), the C sources of
    the optional extension, and nothing else."""
    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
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
    assert sorted(actual - listed) == [], "modules missing from the README's Layout"
    stale = sorted(e for e in listed - actual - listed_dirs)
    assert stale == [], "Layout entries that are not modules"
    for directory in listed_dirs:
        assert (PACKAGE.parent / directory).is_dir(), directory
