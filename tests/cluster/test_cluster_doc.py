"""docs/cluster.md's example runs as written, from a fresh clone, on 127.0.0.1.

The blocks between ``<!-- cluster-example:begin -->`` and ``<!-- cluster-example:end -->``
are taken from the markdown in order and run as one ``bash`` script in a fresh ``git
clone`` of this repository (its committed state), after the doc's build step (``make -C
clients/c``). Two things differ from a reader's run, both outside the blocks' text:

- ``pip install -e '.[cluster]'`` is not run (it would change the shared interpreter);
  the clone is put first on ``PYTHONPATH`` instead, which is what the editable install
  does;
- the ports 8786 and 8787 are replaced by free ones, so the test cannot collide with a
  cluster that is already running on this machine.

The script runs in its own session; whatever it leaves running (if it fails before its
``kill`` lines) is killed with that session's process group, by the PID this test
started. The match's table must equal a local run's but for time and route, and each
tournament's results file must hold its six games.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed")
pytest.importorskip("cryptography")

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "cluster.md"
RUN_S = 900.0  # bounds for a loaded machine, never asserted on

pytestmark = pytest.mark.timeout(1200)


def example_blocks(text: str) -> list[str]:
    """The shell blocks between the example markers, in order, without their fences."""
    out = []
    for part in re.findall(r"<!-- cluster-example:begin -->\s*```sh\n(.*?)```\s*<!-- cluster-example:end -->", text, re.S):
        out.append(part)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def comparable(table: list[str]) -> list[str]:
    """A match table without what differs by nature: the time (line 2) and the route
    (the last cell of line 1)."""
    out = list(table)
    out[0] = out[0].rsplit(" | ", 1)[0]
    out[1] = re.sub(r" in [0-9.]+ s \([0-9]+ hands/s\)", "", out[1])
    return out


def test_the_doc_has_the_example_in_order() -> None:
    blocks = example_blocks(DOC.read_text())
    assert len(blocks) == 5
    joined = "\n".join(blocks)
    assert joined.index("dask scheduler") < joined.index("okgin match") < joined.index("okgin tournament")
    assert "--host 127.0.0.1" in blocks[0] and "kill" in blocks[-1]


def test_the_example_runs_as_written_from_a_fresh_clone(tmp_path: Path) -> None:
    if shutil.which("git") is None or shutil.which("make") is None or shutil.which("dask") is None:
        pytest.skip("needs git, make and the dask command")
    clone = tmp_path / "okgin"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=300, capture_output=True)
    env = {**os.environ, "PYTHONPATH": str(clone)}
    build = subprocess.run(["make", "-C", "clients/c"], cwd=clone, env=env, capture_output=True, text=True, timeout=300)
    if build.returncode != 0:
        pytest.skip(f"the C bot does not build here (compiler or libraries missing): {build.stderr[-500:]}")
    tcp, tls = free_port(), free_port()
    script = "\n".join(example_blocks(DOC.read_text())).replace("8786", str(tcp)).replace("8787", str(tls))
    proc = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], cwd=clone, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=RUN_S)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # only what this script started (its own session)
        if proc.poll() is None:
            proc.wait(30)
    assert proc.returncode == 0, f"stdout:\n{out[-3000:]}\nstderr:\n{err[-5000:]}"

    # The two matches: each table is the local run's but for time and route.
    lines = out.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("okgin match: simple vs random")]
    assert len(starts) == 2, out
    assert lines[starts[0]].endswith(f"| dask tcp://127.0.0.1:{tcp}")
    assert lines[starts[1]].endswith(f"| dask tls://127.0.0.1:{tls}")
    for games, at in zip((200, 100), starts, strict=True):
        local = subprocess.run([sys.executable, "-m", "okgin", "match", "simple", "random", "--games", str(games),
                                "--seed", "7"], cwd=clone, env=env, capture_output=True, text=True, timeout=RUN_S)
        assert local.returncode == 0, local.stderr
        want = local.stdout.rstrip("\n").splitlines()
        assert comparable(lines[at : at + len(want)]) == comparable(want)

    # The two tournaments: six games each, every one ended normally.
    sys.path.insert(0, str(ROOT))
    from competition.tournament.store import ResultsStore

    for db in ("cluster-demo.sqlite", "cluster-demo-tls.sqlite"):
        st = ResultsStore.open_existing(clone / db)
        try:
            games = st.games()
        finally:
            st.close()
        assert len(games) == 6 and all(g.termination == "normal" for g in games), db
    assert (clone / "cluster-certs" / "ca.pem").is_file()
