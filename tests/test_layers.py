"""The layering, checked: ``okgin`` (pure) <- ``referee`` <- everything else (``clients``,
``competition``); the referee imports no client and no competition code; clients never import the
referee, except the one embedded launcher; competition code imports no client (bots run as
processes); only the CLI names every package.

The import contracts are in pyproject.toml (``[tool.importlinter]``) and checked by import-linter,
a library made for it: it follows every import, also those inside functions and chains through
other modules. What it cannot see is a module named as a string for ``importlib`` (how
``okgin/cli.py`` loads its subcommands), so the second half of this file reads the source for those.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("okgin", "referee", "clients", "competition", "arena")

# The modules that may name every package, each with why. okgin/cli.py is *the* CLI: it
# dispatches every subcommand by module name.
NAMES_EVERY_PACKAGE = {
    "okgin/cli.py": "the CLI: `okgin COMMAND` loads each subcommand's module by name",
}

# What a module of each package may name (import, or spell out as a module name in a string),
# besides the per-file exceptions below. The same layering as the import contracts, also for the
# names import-linter cannot see (``importlib.import_module("referee.cli")``).
MAY_NAME = {
    "okgin": {"okgin"},
    "referee": {"okgin", "referee"},
    "clients": {"okgin", "clients"},
    "competition": {"okgin", "referee", "competition"},
    "arena": {"okgin", "referee", "competition", "arena"},
}
# file -> the further packages it may name, and why (the same exceptions as in pyproject.toml).
NAMES_ALSO = {
    "clients/tui/house.py": ({"referee"}, "okgin play: the one embedded launcher (a referee in a thread, bots, the TUI)"),
    "clients/match_cli.py": ({"competition"}, "okgin match --dask: competition.cluster's connection and TLS errors"),
    "clients/match_dask.py": ({"competition"}, "okgin match --dask: competition.cluster's client and TLS"),
}


def test_the_import_contracts_hold() -> None:
    """``lint-imports`` with the contracts in pyproject.toml; its report names the chain that breaks one."""
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))"
    try:
        p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"lint-imports took over {e.timeout} s")
    if p.returncode != 0:
        pytest.fail(f"lint-imports exited {p.returncode}:\n{p.stdout}{p.stderr}", pytrace=False)


def _sources() -> list[Path]:
    return sorted(f for pkg in PACKAGES for f in (ROOT / pkg).rglob("*.py") if "node_modules" not in f.parts)


def _module_exists(name: str) -> bool:
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


_DOTTED = re.compile(r"(okgin|referee|clients|competition|arena)(\.\w+)+")


def named_packages(path: Path) -> set[str]:
    """The top-level packages a source file names: its own, those it imports (absolute imports;
    relative ones stay in its own), and those whose modules it spells out in a string
    (``importlib.import_module("referee.cli")``, ``-m clients.tui.serve_cli``)."""
    own = path.relative_to(ROOT).parts[0]
    found = {own}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _DOTTED.fullmatch(node.value):
            if _module_exists(node.value):
                found.add(node.value.split(".")[0])
    return found & set(PACKAGES)


def test_only_the_cli_names_every_package() -> None:
    every = {str(f.relative_to(ROOT)) for f in _sources() if named_packages(f) == set(PACKAGES)}
    assert every <= set(NAMES_EVERY_PACKAGE), (
        f"only the CLI names every package ({PACKAGES}): {sorted(every - set(NAMES_EVERY_PACKAGE))}"
    )
    assert set(NAMES_EVERY_PACKAGE) <= every, (
        f"no longer names every package, drop from the list: {sorted(set(NAMES_EVERY_PACKAGE) - every)}"
    )


def test_the_engine_names_no_referee_or_client_module_even_as_a_string() -> None:
    """import-linter doesn't see ``importlib.import_module("referee.x")``; this does. Only the CLI may."""
    bad = [
        str(f.relative_to(ROOT))
        for f in (ROOT / "okgin").rglob("*.py")
        if f.relative_to(ROOT).as_posix() != "okgin/cli.py" and named_packages(f) - {"okgin"}
    ]
    assert not bad, f"okgin modules naming referee or clients modules: {bad}"


def test_each_package_names_only_what_its_layer_may() -> None:
    """The layering for names import-linter cannot see too (strings for ``importlib``, ``-m``)."""
    bad = []
    for f in _sources():
        rel = f.relative_to(ROOT).as_posix()
        if rel in NAMES_EVERY_PACKAGE:
            continue
        allowed = MAY_NAME[rel.split("/")[0]] | NAMES_ALSO.get(rel, (set(), ""))[0]
        if extra := named_packages(f) - allowed:
            bad.append(f"{rel} names {sorted(extra)}")
    assert not bad, "modules naming packages their layer may not:\n" + "\n".join(bad)


def test_each_named_exception_is_still_needed() -> None:
    stale = [rel for rel, (extra, _) in NAMES_ALSO.items() if not extra & named_packages(ROOT / rel)]
    assert not stale, f"NAMES_ALSO entries no longer needed, remove them: {stale}"
