"""One place reads the environment (issue 25 item 3): ``okgin/env.py``.

No module of okgin, the referee or the clients reads ``os.environ`` or ``os.getenv`` itself,
every ``OKGIN_*`` name the code mentions is listed in :data:`okgin.env.VARIABLES`, and the table in
docs/operations.md (*Environment variables*) is the one ``python -m okgin.env`` prints. Passing
the whole environment on to a child (``{**os.environ, ...}``, ``dict(os.environ)``) is not a read.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from okgin import env

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = [p for p in ("okgin", "referee", "clients", "competition", "arena") if (ROOT / p).is_dir()]
SOURCES = sorted(f for pkg in PACKAGES for f in (ROOT / pkg).rglob("*.py") if "node_modules" not in f.parts)
ENV_MODULE = ROOT / "okgin" / "env.py"


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name) \
        and node.value.id == "os"


def environment_reads(path: Path) -> list[str]:
    """Where ``path`` reads a variable itself: ``os.environ.get(...)``, ``os.environ[...]``,
    ``os.getenv(...)``, ``"X" in os.environ``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        read = (
            (isinstance(node, ast.Attribute) and _is_environ(node.value) and node.attr in ("get", "setdefault", "pop"))
            or (isinstance(node, ast.Subscript) and _is_environ(node.value) and not isinstance(node.ctx, ast.Store))
            or (isinstance(node, ast.Attribute) and node.attr in ("getenv", "getenvb") and isinstance(node.value, ast.Name)
                and node.value.id == "os")
            or (isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators))
        )
        if read:
            where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            found.append(f"{where}:{getattr(node, 'lineno', '?')}")
    return found


def test_no_module_reads_the_environment_but_okgin_env() -> None:
    reads = [r for f in SOURCES if f != ENV_MODULE for r in environment_reads(f)]
    assert not reads, f"read the environment through okgin.env.get/flag (and list the variable there): {reads}"


def test_the_check_sees_each_way_of_reading(tmp_path: Path) -> None:
    src = tmp_path / "probe.py"
    src.write_text(
        "import os\n"
        "a = os.environ.get('OKGIN_TOKEN')\n"
        "b = os.environ['OKGIN_TOKEN']\n"
        "c = os.getenv('OKGIN_TOKEN')\n"
        "d = 'OKGIN_TOKEN' in os.environ\n"
        "e = {**os.environ, 'OKGIN_TOKEN': 't'}\n"  # passing it on: not a read
        "f = dict(os.environ)\n",
        encoding="utf-8",
    )
    assert sorted(int(r.rsplit(":", 1)[1]) for r in environment_reads(src)) == [2, 3, 4, 5]


def test_every_okgin_variable_in_the_code_is_documented() -> None:
    named = set()
    for f in SOURCES:
        named |= set(re.findall(r"\bOKGIN_[A-Z][A-Z0-9_]*[A-Z0-9]\b", f.read_text(encoding="utf-8")))
    missing = named - {v.name for v in env.VARIABLES}
    assert not missing, f"add these to okgin.env.VARIABLES (name, meaning, default): {sorted(missing)}"


def test_the_documented_table_is_generated_from_okgin_env() -> None:
    text = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- okgin.env: begin -->\n(.*)<!-- okgin.env: end -->", text, re.S)
    assert m, "docs/operations.md lost its okgin.env markers"
    assert m.group(1) == env.markdown_table(), "regenerate it: python -m okgin.env (between the markers)"


def test_get_and_flag() -> None:
    assert env.get("OKGIN_TOKEN", {"OKGIN_TOKEN": "abc"}) == "abc"
    assert env.get("OKGIN_TOKEN", {"OKGIN_TOKEN": ""}) is None
    assert env.get("OKGIN_TOKEN", {}) is None
    assert [env.flag("OKGIN_ASCII", {"OKGIN_ASCII": v}) for v in ("", "0", "1", "yes")] == [False, False, True, True]
    with pytest.raises(KeyError, match=r"okgin\.env\.VARIABLES"):
        env.get("OKGIN_NO_SUCH_THING", {})
    assert len({v.name for v in env.VARIABLES}) == len(env.VARIABLES)
    assert {v.group for v in env.VARIABLES} <= set(env.GROUPS)
