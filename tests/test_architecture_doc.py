"""ARCHITECTURE.md names only what exists (issue 25 item 5).

An architecture document that names a module or function that has been renamed or moved
sends a newcomer looking for something that is not there, and it goes stale without
anyone noticing. This test reads every backticked span of ARCHITECTURE.md (outside
fenced blocks) and checks:

- a repository path (``referee/transport.py``, ``tests/tournament/``, ``protocol.schema.json``)
  exists; ``tests/x.py::name`` also needs ``name`` defined in that file;
- a dotted name that starts with a package (``referee.dispatch.Dispatcher.handle``)
  resolves: the longest prefix that is a module file, then each remaining part a
  top-level definition, an assignment, an import followed to its source, a class member
  or an attribute assigned as ``self.NAME`` in a method;
- a short ``Class.member`` (``Runner.worker``, ``Table.host``) names a member of some class
  of that name in ``okgin/``, ``referee/``, ``clients/`` or ``competition/``.

It resolves names from the source (AST) without importing anything, so optional
dependencies (Dask, Textual) need not be installed and no import can have side effects.
It also checks that README.md links the document.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "ARCHITECTURE.md"
PACKAGES = ("okgin", "referee", "clients", "competition", "arena", "bench", "tests")
PATH_ROOTS = (*PACKAGES, "docs")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
SPAN = re.compile(r"`([^`\n]+)`")
DOTTED = re.compile(rf"(?:{'|'.join(PACKAGES)})(?:\.[A-Za-z_]\w*)+")
SHORT = re.compile(r"[A-Z]\w*(?:\.[A-Za-z_]\w*)+")
PATH = re.compile(rf"(?:{'|'.join(PATH_ROOTS)})/[\w./-]*(?:::\w+)?")
ROOT_FILE = re.compile(r"[\w.-]+\.(?:py|md|json|toml)")


def spans(text: str) -> list[str]:
    """Every backticked span outside fenced blocks, a trailing ``()`` dropped."""
    out = []
    for s in SPAN.findall(FENCE.sub("", text)):
        s = s.strip()
        out.append(s[:-2] if s.endswith("()") else s)
    return out


@functools.cache
def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def module_path(parts: tuple[str, ...]) -> Path | None:
    """The file (or namespace directory) of the module named by ``parts``."""
    base = ROOT.joinpath(*parts)
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    if base.is_dir():
        return base
    return None


@functools.cache
def _self_attrs(cls: ast.ClassDef) -> frozenset[str]:
    names = set()
    for node in ast.walk(cls):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
                    names.add(sub.attr)
    return frozenset(names)


def _assigned(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """Names defined by a module's or class's own statements (not imports)."""
    found: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Name):
                        found[sub.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found[node.target.id] = node
    return found


def _import_source(mod: tuple[str, ...], path: Path, name: str) -> tuple[str, ...] | None:
    """Where ``name`` comes from if the module imports it: (module parts..., original name)."""
    if path.is_dir():
        return None
    for node in parse(path).body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) != name:
                    continue
                if node.level:
                    pkg = mod if path.name == "__init__.py" else mod[:-1]
                    base = pkg[: len(pkg) - (node.level - 1)] if node.level > 1 else pkg
                else:
                    base = ()
                source = (*base, *(node.module.split(".") if node.module else ()))
                return (*source, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if (alias.asname or alias.name.split(".")[0]) == name:
                    return tuple(alias.name.split(".")[:1])
    return None


def _member(cls: ast.ClassDef, mod: tuple[str, ...], path: Path, name: str, depth: int) -> ast.AST | bool | None:
    own = _assigned(cls.body)
    if name in own:
        return own[name]
    if name in _self_attrs(cls):
        return True
    for base in cls.bases:  # a base class of the same module, or one it imports
        if isinstance(base, ast.Name):
            found = _lookup(mod, path, (base.id, name), depth + 1)
            if found:
                return found
    return None


def _lookup(mod: tuple[str, ...], path: Path, rest: tuple[str, ...], depth: int = 0) -> ast.AST | bool | None:
    """Resolve ``rest`` inside module ``mod`` (file ``path``); None if something is missing."""
    if depth > 20:
        return None
    if path.is_dir():  # a namespace package: only submodules
        sub = module_path((*mod, rest[0]))
        if sub is None:
            return None
        return True if len(rest) == 1 else _lookup((*mod, rest[0]), sub, rest[1:], depth + 1)
    top = _assigned(parse(path).body)
    node: ast.AST | bool | None = top.get(rest[0])
    if node is None:
        source = _import_source(mod, path, rest[0])
        if source is not None:
            src_mod = module_path(source)
            if src_mod is not None:  # a module imported by name
                return True if len(rest) == 1 else _lookup(source, src_mod, rest[1:], depth + 1)
            src_mod = module_path(source[:-1])
            if src_mod is None:
                return None  # a third-party import: not ours to name
            return _lookup(source[:-1], src_mod, (source[-1], *rest[1:]), depth + 1)
        sub = module_path((*mod, rest[0])) if path.name == "__init__.py" else None
        if sub is None:
            return None
        return True if len(rest) == 1 else _lookup((*mod, rest[0]), sub, rest[1:], depth + 1)
    for name in rest[1:]:
        if not isinstance(node, ast.ClassDef):
            return None
        node = _member(node, mod, path, name, depth)
        if node is None:
            return None
    return node


def resolves(dotted: str) -> bool:
    """Whether a package-qualified dotted name names something in the source tree."""
    parts = tuple(dotted.split("."))
    for k in range(len(parts), 0, -1):
        path = module_path(parts[:k])
        if path is not None:
            return k == len(parts) or _lookup(parts[:k], path, parts[k:]) is not None
    return False


@functools.cache
def classes(name: str) -> list[tuple[tuple[str, ...], Path, ast.ClassDef]]:
    """Every class called ``name`` in okgin/, referee/, clients/ and competition/ (only files whose
    text defines one are parsed)."""
    found = []
    pattern = re.compile(rf"^\s*class {re.escape(name)}\b", re.M)
    for pkg in ("okgin", "referee", "clients", "competition", "arena"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if not pattern.search(path.read_text(encoding="utf-8")):
                continue
            rel = path.relative_to(ROOT).with_suffix("")
            mod = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            found += [(mod, path, node) for node in ast.walk(parse(path))
                      if isinstance(node, ast.ClassDef) and node.name == name]
    return found


def short_resolves(name: str) -> bool:
    """``Class.member[.member]``: some class of that name has the member."""
    cls_name, *rest = name.split(".")
    for mod, path, cls in classes(cls_name):
        node: ast.AST | bool | None = cls
        for part in rest:
            if not isinstance(node, ast.ClassDef):
                node = None
                break
            node = _member(node, mod, path, part, 0)
        if node is not None:
            return True
    return False


def path_exists(token: str) -> bool:
    file, _, name = token.partition("::")
    path = ROOT / file
    if not path.exists():
        return False
    if name:
        return name in _assigned(parse(path).body)
    return True


def problems(text: str) -> list[str]:
    out = []
    for s in spans(text):
        if PATH.fullmatch(s):
            if not path_exists(s):
                out.append(f"path {s!r} does not exist")
        elif ROOT_FILE.fullmatch(s) and "." in s and not s.startswith("."):
            if not (ROOT / s).exists():
                out.append(f"file {s!r} does not exist at the repository's root")
        elif DOTTED.fullmatch(s):
            if not resolves(s):
                out.append(f"name {s!r} does not resolve")
        elif SHORT.fullmatch(s) and not short_resolves(s):
            out.append(f"no class {s.split('.')[0]!r} has {s.split('.', 1)[1]!r}")
    return out


def test_every_named_path_and_name_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert not problems(text), "ARCHITECTURE.md names what the code does not have:\n" + "\n".join(problems(text))


def test_the_document_names_enough_to_be_checked() -> None:
    """Guard the guard: a change to the patterns that silently skips everything fails here."""
    found = spans(DOC.read_text(encoding="utf-8"))
    assert sum(bool(DOTTED.fullmatch(s)) for s in found) >= 80
    assert sum(bool(PATH.fullmatch(s)) for s in found) >= 60
    assert sum(bool(SHORT.fullmatch(s)) for s in found) >= 5


def test_the_checker_catches_stale_names() -> None:
    assert resolves("referee.dispatch.Dispatcher.handle")
    assert resolves("referee.table.table.Table.host")  # self.host in __init__
    assert resolves("okgin.protocol.catalogue.validate")
    assert resolves("clients.bots.random_bot.RandomBot.on_hand_end")  # inherited from clients.bot.Bot
    assert short_resolves("Runner.worker")
    assert not resolves("referee.dispatch.Dispatcher.no_such_handler")
    assert not resolves("referee.no_such_module")
    assert not resolves("referee.table.table.no_such_function")
    assert not short_resolves("Runner.no_such_method")
    text = DOC.read_text(encoding="utf-8")
    assert "okgin/cards.py" in unmapped(text.replace("`okgin/cards.py`", "cards"))
    assert problems("`referee/no_such_file.py` and `tests/test_lint.py::no_such_test`") == [
        "path 'referee/no_such_file.py' does not exist",
        "path 'tests/test_lint.py::no_such_test' does not exist",
    ]


SECTION = re.compile(r"((?:docs/)?(?:protocol|rules)\.md) §(\d+(?:\.\d+)*)")
HEADING = re.compile(r"^#+ (\d+(?:\.\d+)*)[. ]", re.M)
PYTHON_M = re.compile(r"python -m ([\w.]+)")


def test_cited_sections_and_commands_exist() -> None:
    """``protocol.md §13.2`` and ``docs/rules.md §8`` name real headings; ``python -m X`` a real module."""
    text = DOC.read_text(encoding="utf-8")
    missing = []
    for doc, section in SECTION.findall(text):
        path = ROOT / (doc if doc.startswith("docs/") or doc == "protocol.md" else "docs/" + doc)
        if section not in HEADING.findall(path.read_text(encoding="utf-8")):
            missing.append(f"{doc} §{section}")
    missing += [f"python -m {m}" for m in PYTHON_M.findall(text) if not resolves(m)]
    assert not missing, f"ARCHITECTURE.md cites what does not exist: {missing}"


def test_readme_links_the_document() -> None:
    head = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## ", 2)
    assert "(ARCHITECTURE.md)" in "\n## ".join(head[:2]), "README.md must link ARCHITECTURE.md near the top"


def unmapped(text: str) -> list[str]:
    """Python modules of okgin/, referee/, clients/ and competition/ that the document places nowhere:
    not by path, not by dotted name (or a name inside it), not by a directory below the
    package (``clients/tui/`` places its screens)."""
    named = set(spans(text))
    dirs = {s.rstrip("/") for s in named if PATH.fullmatch(s) and s.endswith("/")}
    dotted = {s for s in named if DOTTED.fullmatch(s)}
    out = []
    for pkg in ("okgin", "referee", "clients", "competition", "arena"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT)
            mod = ".".join(rel.with_suffix("").parts)
            if path.name == "__init__.py":
                continue
            if rel.as_posix() in named or any(d == mod or d.startswith(mod + ".") for d in dotted):
                continue
            if any(p.as_posix() in dirs for p in rel.parents if len(p.parts) >= 2):
                continue
            out.append(rel.as_posix())
    return out


def test_every_module_has_a_place_on_the_map() -> None:
    """The other direction: a new module must be placed on the map (by path, name or its
    directory), so the map cannot silently miss a part of the code."""
    missing = unmapped(DOC.read_text(encoding="utf-8"))
    assert not missing, f"ARCHITECTURE.md's code map places no module {missing}: add it where it belongs"
