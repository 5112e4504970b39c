"""Run ``okgin conformance`` as a user would (a subprocess), several at once, read its JSON."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class KitRun:
    """One finished run of the kit: exit status, report text and the JSON results."""

    argv: list[str]
    status: int
    output: str
    report: dict[str, Any]

    def feature(self, key: str) -> dict[str, Any]:
        return self.report["features"][key]

    def explain(self) -> str:
        return f"$ {' '.join(self.argv)}\n(exit {self.status})\n{self.output[-6000:]}"


def run_kits(jobs: dict[str, list[str]], timeout: float = 900) -> dict[str, KitRun]:
    """Start one kit per entry (``kit arguments`` then ``--`` and the bot's command),
    all at once, and wait for every one."""
    out: dict[str, KitRun] = {}
    with tempfile.TemporaryDirectory(prefix="okgin-kit-test-") as tmp:
        procs = {}
        for key, args in jobs.items():
            path = Path(tmp) / f"{key}.json"
            argv = [sys.executable, "-m", "okgin", "conformance", "--json", str(path), *args]
            log = open(Path(tmp) / f"{key}.log", "w+b")
            procs[key] = (argv, path, log, subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
        for key, (argv, path, log, proc) in procs.items():
            try:
                status = proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                status = proc.wait(30)
            log.seek(0)
            text = log.read().decode(errors="replace")
            log.close()
            report = json.loads(path.read_text()) if path.exists() else {}
            out[key] = KitRun(argv, status, text, report)
    return out
