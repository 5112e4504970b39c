"""No module uses another module's underscored names (GUIDE: layers and ownership).

An underscore says "mine, free to change": a caller elsewhere turns every such change into a
silent break. This reads the source of okgin/, referee/, clients/ and competition/ (no import, so optional
extras don't matter) and fails on:

1. ``from x import _name`` where x is another project module (relative imports included);
2. ``x._name`` where x is an imported project module or a name imported from one
   (``runner_module._retire``, ``Runner._retire``);
3. ``obj._name`` (also ``self._name``) where no class of this file defines ``_name``: not a method,
   not a class attribute, not stored on ``self``/``cls``. So the name is another module's
   object's (a subclass using its base's privates, a function reaching into an argument).

Dunder names (``__init__``, ``__all__``) are public. What cannot be fixed today is in ALLOWED
with its reason; a new use fails, and an entry that no longer matches fails too, so the list
only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("okgin", "referee", "clients", "competition", "arena")

# (file, underscored name): why it is still there.
ALLOWED: dict[tuple[str, str], str] = {
    # Third-party base classes whose documented extension points carry an underscore.
    ("clients/tui/app.py", "_filters"): "textual.App's line filters (read to drop the ANSI colour filter)",
    ("clients/tui/serve_cli.py", "_build_environment"): "textual_serve.Server hook, overridden",
    ("clients/tui/serve_cli.py", "_process_messages"): "textual_serve.Server hook, overridden",
    ("clients/tui/serve_cli.py", "_download_manager"): "textual_serve.Server's attribute, used by the override",
    ("okgin/envs/aec.py", "_accumulate_rewards"): "PettingZoo AECEnv helper meant for subclasses",
    ("okgin/envs/aec.py", "_was_dead_step"): "PettingZoo AECEnv helper meant for subclasses",
    # The standard library's public names that start with an underscore.
    ("competition/tournament/cgroups.py", "_exit"): "os._exit, documented: leave a forked child at once",
    ("competition/tournament/procs.py", "_exit"): "os._exit, documented: leave a forked child at once",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _source_of(path: Path, me: str, node: ast.ImportFrom) -> str:
    """The absolute module an ``ImportFrom`` in module ``me`` reads from."""
    if node.level == 0:
        return node.module or ""
    package = me.split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join(package + ([node.module] if node.module else []))


def _own_privates(tree: ast.Module) -> set[str]:
    """The underscored attribute names this file's classes define: methods and class attributes,
    attributes stored on ``self``/``cls``, keywords (``Thing(_x=...)``) and strings (``__slots__``,
    ``getattr(self, "_x")``). Module-level functions don't count: ``runner._retire`` is not this
    file's ``_retire()``."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    own.add(item.name)
                elif isinstance(item, ast.Assign):
                    own |= {t.id for t in item.targets if isinstance(t, ast.Name)}
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    own.add(item.target.id)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            own.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            own.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            own.add(node.value)
    return {n for n in own if _private(n)}


def violations(path: Path, module: str | None = None) -> list[tuple[int, str, str]]:
    """(line, underscored name, what) for each use of another module's underscored name in the
    file at ``path``, whose dotted name is ``module`` (by default read from its place in the tree)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    me = module or _module_name(path)
    found: list[tuple[int, str, str]] = []
    imported: dict[str, str] = {}  # local name -> the project module or object it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in PACKAGES:
                    imported[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            source = _source_of(path, me, node)
            if source.split(".")[0] not in PACKAGES:
                continue
            for a in node.names:
                if _private(a.name) and source != me:
                    found.append((node.lineno, a.name, f"from {source} import {a.name}"))
                imported[a.asname or a.name] = f"{source}.{a.name}"
    own = _own_privates(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        base = node.value
        while isinstance(base, ast.Attribute):
            base = base.value
        if isinstance(base, ast.Name) and base.id in imported:
            found.append((node.lineno, node.attr, f"{ast.unparse(node)} ({base.id} is {imported[base.id]})"))
        elif node.attr not in own:
            found.append((node.lineno, node.attr, f"{ast.unparse(node)} (no class in this file defines {node.attr})"))
    return found


def _sources() -> list[Path]:
    return sorted(f for p in PACKAGES for f in (ROOT / p).rglob("*.py") if "node_modules" not in f.parts)


def test_no_module_uses_another_modules_underscored_names() -> None:
    seen: set[tuple[str, str]] = set()
    bad: list[str] = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        for line, name, what in violations(path):
            if (rel, name) in ALLOWED:
                seen.add((rel, name))
            else:
                bad.append(f"{rel}:{line}: {what}")
    assert not bad, "another module's underscored names (make it public with a docstring, or add an accessor):\n" + "\n".join(bad)
    stale = sorted(set(ALLOWED) - seen)
    assert not stale, f"ALLOWED entries that no longer occur, remove them: {stale}"


def test_the_check_sees_each_kind(tmp_path: Path) -> None:
    """Each rule on a small module (the walk itself, not today's code)."""
    path = tmp_path / "probe.py"
    path.write_text(
        "import referee.server\n"
        "from referee.tables import _hidden, Table\n"
        "from .lobby import _other\n"
        "class Mine:\n"
        "    def __init__(self):\n"
        "        self._ok = 1\n"
        "    def _fine(self):\n"
        "        return self._ok, self.__class__, self._inherited\n"
        "def _retire(x):\n"
        "    return x\n"
        "def f(t, runner):\n"
        "    return referee.server._x, Table._y, runner._retire, _retire(t)\n"
    )
    names = sorted(name for _, name, _ in violations(path, module="referee.probe"))
    assert names == ["_hidden", "_inherited", "_other", "_retire", "_x", "_y"]
