"""bench/arena.py's C driver (bench/loaddriver in arena mode) against a real ``okgin arena``:
a handful of bot accounts sign in, seek, follow game_ready to the shard with their seat
tokens and play; the driver ends by itself after its window and prints the JSON line that
bench/arena.py reads. Why a test: the bench is run rarely, by hand, on a quiet machine; a
protocol change that breaks its driver should fail here, not there."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from argparse import Namespace
from pathlib import Path
from typing import Any

import pytest
from arenakit import ArenaProcess, add_accounts

ROOT = Path(__file__).resolve().parents[2]


def bench_arena() -> Any:
    """bench/arena.py as a module (it is a script, not a package member)."""
    spec = importlib.util.spec_from_file_location("okgin_bench_arena", ROOT / "bench" / "arena.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_c_driver_plays_arena_games(tmp_path: Path) -> None:
    bench = bench_arena()
    binary, why = bench.load_referee_bench().build_loaddriver()
    if binary is None:
        missing = [t for t in ("make", "cc", "pkg-config") if shutil.which(t) is None]
        if missing:
            pytest.skip(f"{', '.join(missing)} missing: cannot build bench/loaddriver")
        pytest.fail(f"bench/loaddriver does not build: {why}")
    state = tmp_path / "arena"
    keys = add_accounts(state, *(f"b{i}" for i in range(4)))
    arena = ArenaProcess(state, shards=2)
    try:
        args = Namespace(driver="c", loaddriver=binary, warmup=0.0, seconds=12.0)
        argv = bench.driver_argv(args, state, arena.endpoint, sorted(keys.items()), "drv", 0)
        bots = Path(argv[argv.index("--arena-bots") + 1])
        assert bots.stat().st_mode & 0o777 == 0o600
        assert not any(k in " ".join(argv) for k in keys.values())  # keys never on a command line
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        assert set(out) >= {"games", "seconds", "latency", "waits", "errors", "driver_cpu_s"}
        assert out["games"] >= 1, (out["games"], proc.stderr)
        assert out["latency"] and out["waits"]
        assert set(out["errors"]) <= {"busy", "rate_limited"}, proc.stderr
        assert not any(k in proc.stdout + proc.stderr for k in keys.values())

        os.chmod(bots, 0o644)  # readable by others: refused before any connection
        bad = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert bad.returncode == 1 and "mode 0600" in bad.stderr, bad.stderr
    finally:
        assert arena.stop() == 0, arena.stderr()
