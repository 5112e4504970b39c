"""``okgin cluster``: helpers for running tournaments and matches on a Dask cluster.

One subcommand for now, ``certs``: the TLS set of :mod:`competition.cluster.certs` (a CA of
the cluster's own, and one certificate each for the scheduler, the workers and the
runner), with the ``dask`` command lines that use them, so an organiser never has to
learn ``openssl`` to keep a cluster's links private. See docs/cluster.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .certs import CertsError, dask_cli_args, generate


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="okgin cluster", description="Dask cluster helpers (docs/cluster.md).")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    c = sub.add_parser(
        "certs", help="write a CA and TLS certificates for the scheduler, the workers and the runner",
        description="Write a certificate authority of this cluster's own (ca.pem, ca-key.pem) and one certificate "
        "and key per role: scheduler.pem, worker.pem, client.pem (the runner of okgin tournament/match). Every host "
        "trusts ca.pem; keep ca-key.pem on this machine only. Dask's TLS is mutual and checks no host name: "
        "a certificate signed by ca.pem is the whole admission.",
        epilog="Then: dask scheduler --host H --tls-ca-file DIR/ca.pem --tls-cert DIR/scheduler.pem "
        "--tls-key DIR/scheduler-key.pem; "
        "dask worker tls://H:8786 --tls-ca-file DIR/ca.pem --tls-cert DIR/worker.pem --tls-key DIR/worker-key.pem; "
        "okgin match ... --dask tls://H:8786 --dask-tls DIR",
    )
    c.add_argument("dir", metavar="DIR", help="directory to write (created if missing)")
    c.add_argument("--host", action="append", default=[], metavar="NAME_OR_IP",
                   help="a host name or IP to name in the certificates (repeatable; 127.0.0.1 and localhost always are)")
    c.add_argument("--days", type=int, default=825, help="validity in days (default 825)")
    c.add_argument("--force", action="store_true", help="replace an existing set in DIR (every host then needs the new ca.pem)")
    return p


def certs(args: argparse.Namespace) -> int:
    if args.days < 1:
        print("okgin cluster certs: --days must be at least 1", file=sys.stderr)
        return 2
    try:
        written = generate(args.dir, hosts=args.host, days=args.days, force=args.force)
    except CertsError as e:
        print(f"okgin cluster certs: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"okgin cluster certs: cannot write {args.dir}: {e}", file=sys.stderr)
        return 2
    d = Path(args.dir)
    print(f"wrote {len(written)} files in {d}:")
    for path in written:
        print(f"  {path.name}")
    print("copy ca.pem to every host; scheduler.pem/-key.pem to the scheduler's, worker.pem/-key.pem to each worker's, "
          "client.pem/-key.pem to the runner's; keep ca-key.pem here.")
    print(f"  dask scheduler --host HOST {' '.join(dask_cli_args(d, 'scheduler'))}")
    print(f"  dask worker tls://HOST:8786 {' '.join(dask_cli_args(d, 'worker'))}")
    print(f"  okgin match BOT BOT --dask tls://HOST:8786 --dask-tls {d}")
    return 0


def main(argv: list[str]) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if args.command == "certs":
        return certs(args)
    p.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
