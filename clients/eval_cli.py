"""``okgin eval AGENT``: the evaluation protocol (:mod:`clients.evaluation`) as a table."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path

from .bots import BUILTIN_BOTS, BotNotFound, bot_class
from .evaluation import (
    EVAL_PROTOCOL,
    REFERENCE_AGENTS,
    REFERENCE_FILE,
    SPECS,
    EvalResult,
    evaluate,
    format_table,
    load_reference,
    merge_reference,
    write_reference,
)
from .match_referee import CommandBot

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="okgin eval",
        description=f"Evaluate an agent by okgin's protocol {EVAL_PROTOCOL}: fixed published deals, every seating of each, "
        "games to 100, win rate and net points per hand with 95%% intervals clustered by deal, "
        "beside the reference agents' results.",
        epilog=f"AGENT is a built-in bot ({', '.join(BUILTIN_BOTS)}), package.module:Class or path/to/file.py:Class; "
        "or, with --command, a program in any language that keeps protocol.md §18's launch contract, "
        "played through a referee. "
        + ", ".join(f"{v}: {s.deals} deals" for v, s in SPECS.items()) + ". docs/research.md describes the protocol.",
    )
    p.add_argument("agent", nargs="?", metavar="AGENT", help="the agent to evaluate")
    p.add_argument("--command", metavar="CMD",
                   help="the agent is this program (words split as a shell would, no shell run), started once per game "
                   "with OKGIN_ENDPOINT and OKGIN_TOKEN; {endpoint}, {name}, {table} are replaced in its words")
    p.add_argument("--mcp-agent", metavar="CMD",
                   help="the agent is a language-model agent: this MCP host program, started once per game with the MCP "
                   "seat's command in OKGIN_MCP_SERVER (JSON words) and the seat token in OKGIN_SEAT_TOKEN; adds the "
                   "refused move rate and the text per decision")
    p.add_argument("--name", help="the agent's name in the table (default: AGENT as given, or 'command' for --command "
                   "and --mcp-agent)")
    p.add_argument("--timeout", type=float, help="give up a --command evaluation after this many seconds")
    p.add_argument("--variant", choices=[*SPECS, "both"], default="both", help="default: both")
    p.add_argument("--against", default=",".join(REFERENCE_AGENTS), metavar="A,B",
                   help=f"opponents (default {','.join(REFERENCE_AGENTS)})")
    p.add_argument("--deals", type=int, help="fewer deals than the protocol's (the result is marked non-standard)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--reference", action="store_true",
                   help=f"evaluate every reference agent ({', '.join(REFERENCE_AGENTS)}) against every opponent and write "
                   f"{REFERENCE_FILE.name} (--out); rows of other agents added with --add-to-reference are kept")
    p.add_argument("--add-to-reference", action="store_true",
                   help="also store AGENT's results in the reference file (--out), replacing its earlier rows against the "
                   "same opponents: for an agent too slow to rerun with every --reference (the ISMCTS, docs/research.md)")
    p.add_argument("--out", type=Path, default=REFERENCE_FILE,
                   help="the reference file --reference and --add-to-reference write (default: the package's)")
    p.add_argument("--progress", action="store_true", help="count games on standard error")
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    if sum(x for x in (a.agent is not None, a.command is not None, a.mcp_agent is not None, a.reference)) != 1:
        print("okgin eval: name an AGENT, or give --command, --mcp-agent or --reference (one of them)", file=sys.stderr)
        return 2
    command: CommandBot | None = None
    if a.command is not None or a.mcp_agent is not None:
        try:
            words = shlex.split(a.command if a.command is not None else a.mcp_agent)
            command = CommandBot(tuple(words), a.name or "command", mcp=a.mcp_agent is not None)
        except ValueError as e:
            print(f"okgin eval: --command: {e}", file=sys.stderr)
            return 2
    if a.add_to_reference and a.reference:
        print("okgin eval: --add-to-reference adds one AGENT's rows; --reference rebuilds the reference agents' (not both)",
              file=sys.stderr)
        return 2
    if a.deals is not None and a.deals < 1:
        print("okgin eval: --deals must be at least 1", file=sys.stderr)
        return 2
    if a.jobs < 1:
        print("okgin eval: --jobs must be at least 1", file=sys.stderr)
        return 2
    opponents = [o.strip() for o in a.against.split(",") if o.strip()]
    agents: list[str | CommandBot] = list(REFERENCE_AGENTS) if a.reference else [command or a.agent]
    try:
        for name in {*(x for x in agents if isinstance(x, str)), *opponents}:
            bot_class(name)  # an unknown bot is an error before any game is played
    except BotNotFound as e:
        print(f"okgin eval: {e}", file=sys.stderr)
        return 2
    variants = list(SPECS) if a.variant == "both" else [a.variant]
    results: list[EvalResult] = []
    for variant in variants:
        for agent in agents:
            for opp in opponents:
                label = agent.name if isinstance(agent, CommandBot) else agent

                def tick(done: int, total: int, what: str = f"{variant}: {label} vs {opp}") -> None:
                    print(f"\r{what}: {done}/{total} games", end="", file=sys.stderr, flush=True)

                r = evaluate(agent, opp, variant, a.deals, a.jobs, tick if a.progress else None, a.timeout)
                results.append(replace(r, agent=a.name) if a.name and isinstance(agent, str) else r)
                if a.progress:
                    print(file=sys.stderr)
    if a.reference:
        kept = [r for r in load_reference(a.out) if r.agent not in REFERENCE_AGENTS]  # added with --add-to-reference
        write_reference([*results, *kept], a.out)
        print(f"{len(results)} reference results written to {a.out}" + (f" ({len(kept)} added ones kept)" if kept else ""))
    elif a.add_to_reference:
        if any(not r.standard for r in results):
            print("okgin eval: --add-to-reference takes standard results only (no --deals)", file=sys.stderr)
            return 2
        write_reference(merge_reference(results, a.out), a.out)
        print(f"{len(results)} results of {results[0].agent} added to {a.out}")
    if a.json:
        print(json.dumps({"protocol": EVAL_PROTOCOL, "results": [r.to_json() for r in results]}, indent=1))
    else:
        mine = {r.agent for r in results}
        reference = [] if a.reference else [r for r in load_reference() if r.agent not in mine]
        print(format_table(results, reference), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
