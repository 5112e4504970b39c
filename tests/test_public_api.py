"""``__all__`` on the public modules: every module of ``okgin/`` (the pure engine and the protocol
core) and of ``clients/sdk/`` (the Python SDK) says which of its names are meant for users.

Why: a newcomer (and ``from m import *``, the docs, a type checker) can tell the API from the
helpers without reading the code, and a name that is in ``__all__`` is a promise. The check reads
the source (no import: ``okgin/__main__.py`` runs the CLI, ``okgin/envs`` needs optional extras).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = sorted(f for d in ("okgin", "clients/sdk") for f in (ROOT / d).rglob("*.py"))


def _bound(body: list[ast.stmt]) -> set[str]:
    """The names a module's top level binds (also inside ``if``/``try`` blocks)."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.If):
            names |= _bound(node.body) | _bound(node.orelse)
        elif isinstance(node, ast.Try):
            names |= _bound(node.body) | _bound(node.orelse) | _bound(node.finalbody)
            for h in node.handlers:
                names |= _bound(h.body)
    return names


def _all_of(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else getattr(node, "target", None)
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(target, ast.Name) and target.id == "__all__":
            value = ast.literal_eval(node.value) if node.value is not None else None
            assert isinstance(value, (list, tuple)), "__all__ must be a literal list of names"
            return list(value)
    return None


@pytest.mark.parametrize("path", PUBLIC, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_public_module_lists_its_api_in_all(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names = _all_of(tree)
    assert names is not None, f"{path.relative_to(ROOT)} has no __all__: list the names meant for users"
    assert len(names) == len(set(names)), f"__all__ repeats a name: {names}"
    missing = sorted(set(names) - _bound(tree.body))
    assert not missing, f"__all__ names what the module does not define: {missing}"


def test_the_check_sees_a_module_without_all(tmp_path: Path) -> None:
    """The parser half of the check, on a module that lacks ``__all__`` and one that lists a ghost."""
    assert _all_of(ast.parse("x = 1\n")) is None
    tree = ast.parse('__all__ = ["x", "ghost"]\nfrom a import b\nx = 1\n')
    assert _all_of(tree) == ["x", "ghost"]
    assert set(_all_of(tree) or []) - _bound(tree.body) == {"ghost"}
