"""No test waits without a bound (issue 14, item 9): a guard over the test tree's source.

A test that blocks on something that never comes (a DEALER with no peer, a child that
never prints, a thread that never ends) hangs until pytest's timeout and says nothing of
why. This reads every ``tests/**/*.py`` (AST, not text) and refuses the forms that block
without a bound:

- ``subprocess.run/call/check_call/check_output`` and ``.communicate`` without ``timeout=``;
- ``.wait()``, ``.join()``, ``.get()``, ``.result()`` with no argument (a process, thread,
  event, queue or future waited on for ever), unless awaited through ``wait_for(...)``;
- ``.stdout.readline()`` / ``.stderr.readline()`` on a child's pipe (use
  ``bounded.readline``);
- ``socket.create_connection`` without a timeout;
- a ZeroMQ socket (``ctx.socket(zmq.X)``) neither made bounded at once (``limit(...)``,
  or ``bounded.dealer``) nor given ``SNDTIMEO`` in the same function (scripts run as
  their own processes set it inline).

A call that merely shares such a name (``tracker.result()`` of a plain object) is marked
with a trailing ``# not a wait`` comment on its line.

What it cannot see (a blocking ``sock.recv()`` after ``limit`` was forgotten on a socket
made elsewhere, a ``while`` loop without a deadline) stays the reviewer's job.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SUBPROCESS_CALLS = {"run", "call", "check_call", "check_output"}
NO_ARG_WAITS = {"wait", "join", "get", "result"}


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _is_zmq_socket(call: ast.Call) -> bool:
    """``<anything>.socket(zmq.DEALER)`` and the like."""
    return (_name(call.func) == "socket" and isinstance(call.func, ast.Attribute) and len(call.args) == 1
            and isinstance(call.args[0], ast.Attribute) and isinstance(call.args[0].value, ast.Name)
            and call.args[0].value.id == "zmq")


def unbounded_calls(source: str) -> list[tuple[int, str]]:
    """(line, why) for every call in ``source`` that may block without a bound."""
    tree = ast.parse(source)
    exempt: set[int] = set()  # calls whose bound is given by the call around them
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node.func) in ("wait_for", "limit") and node.args:
            exempt.add(id(node.args[0]))
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]

    def sets_sndtimeo(lineno: int) -> bool:
        inner = [f for f in functions if f.lineno <= lineno <= (f.end_lineno or f.lineno)]
        scope = min(inner, key=lambda f: (f.end_lineno or f.lineno) - f.lineno) if inner else tree
        return any(isinstance(n, ast.Attribute) and n.attr == "SNDTIMEO" for n in ast.walk(scope))

    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        kws = {k.arg for k in node.keywords}
        base = node.func.value if isinstance(node.func, ast.Attribute) else None
        if name in SUBPROCESS_CALLS and isinstance(base, ast.Name) and base.id == "subprocess" and "timeout" not in kws:
            found.append((node.lineno, f"subprocess.{name} without timeout="))
        elif name == "communicate" and "timeout" not in kws:
            found.append((node.lineno, ".communicate() without timeout="))
        elif name in NO_ARG_WAITS and not node.args and not node.keywords and id(node) not in exempt:
            found.append((node.lineno, f".{name}() with no timeout"))
        elif name == "readline" and isinstance(base, ast.Attribute) and base.attr in ("stdout", "stderr"):
            found.append((node.lineno, f"{base.attr}.readline() on a pipe (use bounded.readline)"))
        elif name == "create_connection" and len(node.args) < 2 and "timeout" not in kws:
            found.append((node.lineno, "create_connection without a timeout"))
        elif _is_zmq_socket(node) and id(node) not in exempt and not sets_sndtimeo(node.lineno):
            found.append((node.lineno, "a ZeroMQ socket without SNDTIMEO (use bounded.dealer or bounded.limit)"))
    lines = source.splitlines()
    # a call that only shares a waiting method's name (a tracker's ``result()``) says so
    return sorted((ln, why) for ln, why in found if not lines[ln - 1].rstrip().endswith("# not a wait"))


def test_the_guard_sees_each_form() -> None:
    bad = '''
import subprocess, socket, zmq
def f(p, t, q, ctx):
    subprocess.run(["x"])
    p.communicate()
    p.wait()
    t.join()
    q.get()
    p.stdout.readline()
    socket.create_connection(("h", 1))
    s = ctx.socket(zmq.DEALER)
'''
    assert [why.split()[0] for _, why in unbounded_calls(bad)] == [
        "subprocess.run", ".communicate()", ".wait()", ".join()", ".get()", "stdout.readline()", "create_connection", "a"]
    good = '''
import asyncio, subprocess, socket, zmq
async def f(p, t, q, ev, ctx):
    subprocess.run(["x"], timeout=5)
    p.communicate(timeout=5)
    p.wait(5)
    t.join(5)
    q.get(timeout=5)
    d.get("k")
    await asyncio.wait_for(ev.wait(), 5)
    socket.create_connection(("h", 1), timeout=5)
    s = limit(ctx.socket(zmq.DEALER))
def g(ctx):
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.SNDTIMEO, 1000)
'''
    assert unbounded_calls(good) == []


def test_no_test_blocks_without_a_bound() -> None:
    offences = [f"{path.relative_to(TESTS.parent)}:{line}: {why}"
                for path in sorted(TESTS.rglob("*.py")) if "__snapshots__" not in path.parts
                for line, why in unbounded_calls(path.read_text())]
    assert not offences, "blocking calls without a bound (tests/bounded.py has the helpers):\n" + "\n".join(offences)
