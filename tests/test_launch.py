"""One launch module (issue 25 item 3): ``okgin/launch.py`` knows okgin's own command lines.

A real ``okgin referee`` is started from :func:`okgin.launch.referee_argv` and its endpoint read
with :func:`okgin.launch.endpoint_from_line`; a real ``okgin bot`` from
:func:`okgin.launch.bot_argv` parses. And a rule that keeps it so: no other module of the
packages or the benchmarks spells the endpoint line, ``-m okgin bot``/``referee`` or ``--rule``
itself (before, the endpoint was read three ways and ``--rule`` declared ten times).
"""

from __future__ import annotations

import argparse
import ast
import subprocess
from pathlib import Path

from bounded import readline

from okgin import RuleSet
from okgin.launch import ENDPOINT_PREFIX, add_rule_flag, bot_argv, endpoint_from_line, okgin_argv, referee_argv

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = [p for p in ("okgin", "referee", "clients", "competition", "bench") if (ROOT / p).is_dir()]
SOURCES = sorted(f for pkg in PACKAGES for f in (ROOT / pkg).rglob("*.py") if "node_modules" not in f.parts)
LAUNCH = ROOT / "okgin" / "launch.py"


def test_a_referee_started_from_its_argv_prints_the_endpoint_the_launcher_reads(tmp_path: Path) -> None:
    proc = subprocess.Popen(referee_argv(tmp_path / "journals", "--no-journal"), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        # The referee prints it once bound, or exits; bounded, as every read of a child's pipe.
        endpoint = endpoint_from_line(readline(proc.stdout, 120, "okgin referee"))
        assert endpoint is not None and endpoint.startswith("tcp://127.0.0.1:") and not endpoint.endswith(":0")
    finally:
        proc.terminate()
        proc.wait(30)


def test_a_bot_argv_is_what_okgin_bot_accepts() -> None:
    argv = bot_argv("simple", "tcp://127.0.0.1:1", "--games", "1", name="b", seed="k", quiet=True, no_thread=True)
    assert argv[:3] == okgin_argv()
    from clients.bot_cli import build_parser

    args = build_parser().parse_args(argv[4:])
    assert (args.bot, args.connect, args.name, args.seed, args.quiet, args.no_thread) == (
        "simple", "tcp://127.0.0.1:1", "b", "k", True, True)


def test_endpoint_lines() -> None:
    assert endpoint_from_line(ENDPOINT_PREFIX + "ipc:///run/okgin/ref.sock\n") == "ipc:///run/okgin/ref.sock"
    assert endpoint_from_line(b"okgin referee listening on tcp://127.0.0.1:5555\r\n") == "tcp://127.0.0.1:5555"
    for line in ("", "\n", "okgin referee: cannot bind tcp://1.2.3.4:1: denied", ENDPOINT_PREFIX, ENDPOINT_PREFIX + "a b"):
        assert endpoint_from_line(line) is None, line


def test_the_rule_flag_feeds_with_assignments() -> None:
    p = argparse.ArgumentParser()
    add_rule_flag(p, help="h")
    args = p.parse_args(["--rule", "target_score=50", "--rule", "gin_bonus=20"])
    rules = RuleSet(variant="oklahoma").with_assignments(args.rule)
    assert (rules.target_score, rules.gin_bonus) == (50, 20)


def _strings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_only_okgin_launch_spells_the_launch_strings() -> None:
    """The strings a launcher would copy: the endpoint line, ``--rule`` declared as a flag, and
    an ``okgin`` subcommand after ``-m`` (a docstring may still say ``okgin referee``)."""
    found = []
    for f in SOURCES:
        if f == LAUNCH:
            continue
        tree = ast.parse(f.read_text(encoding="utf-8"), str(f))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                if any(isinstance(a, ast.Constant) and a.value == "--rule" for a in node.args):
                    found.append(f"{f.relative_to(ROOT)}:{node.lineno}: declares --rule (use okgin.launch.add_rule_flag)")
            elif isinstance(node, ast.List | ast.Tuple):
                words = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if any(words[i:i + 2] == ["-m", "okgin"] for i in range(len(words))):
                    found.append(f"{f.relative_to(ROOT)}:{node.lineno}: '-m okgin' (use okgin.launch.okgin_argv)")
        for line, s in _strings(f):
            if s.startswith(ENDPOINT_PREFIX.strip()) or "listening on (" in s:
                found.append(f"{f.relative_to(ROOT)}:{line}: the endpoint line (use okgin.launch.endpoint_from_line)")
    assert not found, "\n".join(found)
