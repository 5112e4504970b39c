"""The kit's report: one line per feature, the first offending message of each failure."""

from __future__ import annotations

import json
import shlex
from typing import Any

from .checks import Verdict
from .runner import RunResult

MARK = {"pass": "PASS", "fail": "FAIL", "not exercised": "----"}


def text_report(result: RunResult, verdict: Verdict) -> str:
    cfg = result.config
    games = {v: sum(1 for g in result.games if g.variant == v) for v in cfg.variants}
    lines = [
        f"okgin conformance: {shlex.join(cfg.command)}",
        f"referee {result.referee or '?'} at {result.endpoint} (bot connects through {result.proxy_endpoint}); "
        f"heartbeat {cfg.heartbeat_ms} ms x {cfg.liveness}",
        "games: "
        + ", ".join(f"{n} {v}" for v, n in games.items())
        + f" against {cfg.opponent if not cfg.opponent_command else shlex.join(cfg.opponent_command)}; "
        f"{result.seconds:.1f} s",
        "",
    ]
    width = max(len(f.title) for f in verdict.features) + 2
    for f in verdict.features:
        status = f.status
        tail = f"{f.count}x" if status == "pass" else ("required" if f.required and status != "fail" else "")
        if status == "not exercised":
            tail = "not exercised" + (" (required)" if f.required else "")
        elif status == "fail":
            tail = f"{len(f.failures)} failure(s)"
        lines.append(f"  {MARK[status]}  {f.title.ljust(width, '.')} {tail}")
        if f.failures:
            first = f.failures[0]
            lines.append(f"        first: {first.game}: {first.what}")
            if first.offending:
                lines.append(f"        offending message: {first.offending}")
            if first.context:
                for i, ctx in enumerate(first.context.splitlines()[:12]):
                    lines.append(("        context: " if i == 0 else "                 ") + ctx)
    if verdict.info:
        lines.append("")
        lines.append("observed: " + "; ".join(verdict.info))
    lines.append("")
    if verdict.passed:
        lines.append("RESULT: PASS")
    else:
        lines.append(f"RESULT: FAIL ({len(verdict.problems)} problem(s): " + "; ".join(verdict.problems) + ")")
    return "\n".join(lines)


def json_report(result: RunResult, verdict: Verdict) -> dict[str, Any]:
    cfg = result.config
    return {
        "command": list(cfg.command),
        "passed": verdict.passed,
        "problems": verdict.problems,
        "seconds": round(result.seconds, 3),
        "games": [
            {
                "variant": g.variant,
                "index": g.index,
                "table": g.table,
                "seat": g.seat,
                "seed": g.seed,
                "termination": (g.game_end or {}).get("termination"),
                "problem": g.problem,
                "messages": len(g.records),
                "scores": ((g.game_end or {}).get("final") or {}).get("scores"),
                "winner": (g.game_end or {}).get("winner"),
                "connections": len(g.connections),
                "faults": [f.kind for f in g.faults],
                "exit_code": g.exit_code,
                "exited_by_itself": g.exited_by_itself,
            }
            for g in result.games
        ],
        "features": {
            f.key: {
                "title": f.title,
                "status": f.status,
                "required": f.required,
                "count": f.count,
                "failures": [
                    {"game": x.game, "what": x.what, "offending": x.offending, "context": x.context} for x in f.failures[:20]
                ],
            }
            for f in verdict.features
        },
        "info": verdict.info,
    }


def dump_json(path: str, result: RunResult, verdict: Verdict) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(json_report(result, verdict), fh, indent=2)
