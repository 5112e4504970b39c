"""``okgin mcp``: seat a language-model agent at a referee's table over MCP (stdio).

An MCP host starts this command; it connects to the referee as an ordinary client,
takes the seat (``--table`` joins a named table, ``--token`` presents a reserved seat's
token), and serves the tools ``state``, ``legal_moves``, ``play``, ``advise``,
``history``, ``rules``, ``resign`` and ``rematch`` on stdin/stdout until the host closes them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from clients.sdk import DEFAULT_ENDPOINT, RefereeError, SDKError
from okgin import RuleSet, env
from okgin.endpoint import endpoint_arg
from okgin.errors import RuleError
from okgin.launch import add_rule_flag

EPILOG = """\
Example MCP host configuration (Claude Desktop's claude_desktop_config.json, or any host):
  {"mcpServers": {"okgin": {"command": "okgin",
     "args": ["mcp", "--connect", "tcp://127.0.0.1:7117", "--table", "friday", "--name", "claude"]}}}
A reserved seat's token is secret: pass it in OKGIN_SEAT_TOKEN rather than on the command
line, which other local users can read.
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="okgin mcp",
        description="Seat a language-model agent at a referee's table: an MCP server over stdio with the tools "
                    "state, legal_moves, play, advise, history, rules, resign and rematch. Everything it shows is what "
                    "the referee sends this seat.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--connect", default=DEFAULT_ENDPOINT, metavar="ENDPOINT", type=endpoint_arg,
                   help="referee endpoint, HOST:PORT or tcp://HOST:PORT (default %(default)s)")
    p.add_argument("--table", help="the named table to join (created if new, with --variant and --rule)")
    p.add_argument("--name", default="mcp-agent", help="display name at the table (default %(default)s)")
    p.add_argument("--token", help="a reserved seat's token (from an organiser's create_table); default: $OKGIN_SEAT_TOKEN")
    p.add_argument("--seat", type=int, help="with --table: the seat wanted (default: the lowest free)")
    p.add_argument("--variant", choices=["oklahoma", "box"],
                   help="with --table: the variant (default: the table's, else oklahoma)")
    add_rule_flag(p, help="with --table: a rule option the join asks for (repeatable), e.g. target_score=50")
    p.add_argument("--any-rules", action="store_true",
                   help="with --table: sit at an existing table whatever its rules (the state tool shows them)")
    p.add_argument("--stats", metavar="FILE",
                   help="at the end, write the agent's tool calls, moves played and refused and the characters of text "
                   "it was shown, as JSON (okgin eval --mcp-agent reads it)")
    p.add_argument("--connect-timeout", type=float, default=30.0, metavar="S",
                   help="seconds to wait for the referee and the seat at start-up (default %(default)s)")
    return p


async def _serve(args: argparse.Namespace, token: str | None, rules: RuleSet | None) -> int:
    from .seat import McpSeat
    from .server import build_server

    seat = McpSeat(args.connect, table=args.table, name=args.name, token=token, seat=args.seat,
                   variant=args.variant, rules=rules, any_rules=args.any_rules)
    try:
        await seat.start(timeout=args.connect_timeout)
    except RefereeError as e:
        print(f"okgin mcp: the referee refused: {e.name} ({e.code}): {e.message}", file=sys.stderr)
        await seat.close()
        return 1
    except SDKError as e:
        print(f"okgin mcp: {e}", file=sys.stderr)
        await seat.close()
        return 1
    print(f"okgin mcp: seated at table {seat.table} as seat {seat.seat}; serving MCP on stdio", file=sys.stderr)
    server = build_server(seat)
    try:
        await server.run_stdio_async()
    finally:
        await seat.close()
        if args.stats:
            with open(args.stats, "w", encoding="utf-8") as f:
                json.dump(server.usage.to_json(), f)
    return 0


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    token = args.token or env.get("OKGIN_SEAT_TOKEN")
    if args.table is None and token is None:
        print("okgin mcp: give --table NAME (join a named table) or --token TOKEN (a reserved seat)", file=sys.stderr)
        return 2
    try:
        rules = RuleSet(variant=args.variant or "oklahoma").with_assignments(args.rule) if args.rule else None
    except RuleError as e:
        print(f"okgin mcp: {e}", file=sys.stderr)
        return 2
    try:
        import mcp  # noqa: F401
    except ImportError:
        print("okgin mcp: the MCP SDK is not installed: pip install 'okgin[research]' (or: pip install mcp)", file=sys.stderr)
        return 2
    return asyncio.run(_serve(args, token, rules))
