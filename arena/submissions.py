"""``okgin arena submit`` and ``okgin arena submissions``: hosted bots in, the operators' queue out.

A submission is what a tournament participant is (competition/tournament/config.py's
``command`` participant): a directory and the command that starts the bot in it, with the
same placeholders (``{endpoint}``, ``{table}``, ``{name}``, ``{game}``) and the same refusal
of ``{token}`` (its seat token is in ``OKGIN_TOKEN``). The command is checked by the
tournament's own parser (:func:`competition.tournament.config.parse_config`), and its
program by the tournament's preflight check (:func:`competition.tournament.preflight.program_problem`).

The directory is **copied** into the state directory (``STATE/bots/N``), so that the bot the
arena validated is the bot it keeps playing, whatever happens to the original. The copy
(:func:`copy_bot`) is bounded and refuses, with the path and the reason, what a hostile
directory could use:

- a symbolic link that leads outside the directory (``key -> /etc/shadow``, ``up -> ..``)
  or nowhere: the copy would carry the operator's files into a bot's sandbox. A link
  inside it is kept as a link, made relative;
- anything but files, directories and such links (a FIFO would block the copy, a device
  read from it);
- more than ``hosted_max_mb`` of data or ``hosted_max_files`` entries, or a tree deeper
  than :data:`MAX_DEPTH`: counted while copying, so a huge directory costs at most the
  bound (the partial copy is removed).

Modes: ``STATE/bots`` is 0700 (only the arena's user gets in); inside it a bot's files are
readable by any uid (0644, 0755 for directories and programs), because the sandbox runs
the bot as an unprivileged uid of its own when the arena runs as root
(competition/tournament/sandbox.py), which must read its own program. Nobody else on the
host can reach them through the 0700 directory, and no bot sees another's: its sandbox
binds its own directory only.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import stat
import sys
import time
from pathlib import Path

from competition.tournament.config import ConfigError as TournamentConfigError
from competition.tournament.config import parse_config
from competition.tournament.preflight import program_problem
from referee.private import private_dir

from .config import ConfigError, load_config
from .statedir import add_db_flags, open_store
from .store import SUBMISSION_STATUSES, StoreError, Submission

__all__ = ["MAX_DEPTH", "SubmitError", "check_command", "copy_bot", "main", "main_list", "submit"]

MAX_DEPTH = 32
CHUNK = 1 << 20


class SubmitError(Exception):
    """A submission refused, with a sentence saying what and why."""


def check_command(command: str, bot_dir: Path) -> tuple[str, ...]:
    """The command's words, checked as a tournament participant's (placeholders, no
    ``{token}``) and its program found (in the bot's directory, or on PATH)."""
    try:
        words = tuple(shlex.split(command))
    except ValueError as e:
        raise SubmitError(f"--command: cannot split {command!r} into words: {e}") from None
    if not words:
        raise SubmitError("--command is empty: give the command that starts the bot, e.g. --command \"python3 bot.py\"")
    data = {"participant": [{"name": "submission", "command": list(words), "cwd": str(bot_dir), "dir": str(bot_dir)},
                            {"name": "other", "bot": "random"}]}
    try:
        parse_config(data, bot_dir)
    except TournamentConfigError as e:
        raise SubmitError(f"--command: {str(e).replace('participant[0].command', 'the command')}") from None
    problem = program_problem([words[0]], str(bot_dir), dict(os.environ))
    if problem:
        raise SubmitError(f"--command: {problem} (a relative program is looked for in the bot's directory)")
    return words


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def copy_bot(src: Path, dest: Path, max_bytes: int, max_files: int) -> tuple[int, int]:
    """Copy the directory ``src`` to ``dest`` (which must not exist) within the bounds
    (module doc); returns (entries, bytes). SubmitError naming the offending path otherwise;
    ``dest`` is then removed."""
    try:
        root_real = os.path.realpath(src)
        if not stat.S_ISDIR(os.stat(root_real).st_mode):
            raise SubmitError(f"{src} is not a directory")
    except OSError as e:
        raise SubmitError(f"cannot read {src}: {e.strerror}") from None
    counts = [0, 0]  # entries, bytes

    def count(entries: int = 0, size: int = 0, where: str = "") -> None:
        counts[0] += entries
        counts[1] += size
        if counts[0] > max_files:
            raise SubmitError(f"{src} holds more than {max_files} files and directories (hosted_max_files)")
        if counts[1] > max_bytes:
            raise SubmitError(f"{src} holds more than {max_bytes // (1024 * 1024)} MB (hosted_max_mb), at {where}")

    def copy_file(path: str, to: Path, rel: str, mode: int) -> None:
        flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(path, flags)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced since it was listed
                raise SubmitError(f"{rel} is not a regular file")
            out = os.open(to, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755 if mode & 0o111 else 0o644)
            try:
                while chunk := os.read(fd, CHUNK):
                    count(size=len(chunk), where=rel)
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(out, view):]
            finally:
                os.close(out)
            os.chmod(to, 0o755 if mode & 0o111 else 0o644)  # whatever the umask
        finally:
            os.close(fd)

    def walk(real_dir: str, to: Path, rel: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise SubmitError(f"{rel} is more than {MAX_DEPTH} directories deep")
        os.mkdir(to, 0o755)
        os.chmod(to, 0o755)
        with os.scandir(real_dir) as it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            r = f"{rel}/{e.name}" if rel else e.name
            count(entries=1, where=r)
            st = e.stat(follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                target = os.path.realpath(e.path)
                if not _inside(target, root_real):
                    raise SubmitError(f"{r} is a symbolic link to {os.readlink(e.path)!r}, which leads outside {src}: "
                                      "a hosted bot gets its own directory only (copy the file in instead)")
                if not os.path.exists(target):
                    raise SubmitError(f"{r} is a symbolic link to {os.readlink(e.path)!r}, which does not exist")
                os.symlink(os.path.relpath(target, os.path.realpath(real_dir)), to / e.name)
            elif stat.S_ISDIR(st.st_mode):
                walk(e.path, to / e.name, r, depth + 1)
            elif stat.S_ISREG(st.st_mode):
                copy_file(e.path, to / e.name, r, st.st_mode)
            else:
                raise SubmitError(f"{r} is neither a file, a directory nor a symbolic link (a FIFO, socket or device): "
                                  "not accepted in a hosted bot")

    try:
        walk(root_real, dest, "", 0)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return counts[0], counts[1]


def submit(store_args: argparse.Namespace, account: str, directory: Path, command: str,
           state: Path, max_mb: int, max_files: int, variant: str = "oklahoma") -> Submission:
    """Check, copy and store a hosted bot (status "pending") that plays ``variant``: the arena
    validates it next (in that variant: two processes of it for Oklahoma Gin, three for
    Gin in the Box)."""
    bots = private_dir(state / "bots")  # 0700: the copies of every hosted bot
    src = directory.expanduser()
    if not src.is_dir():
        raise SubmitError(f"{directory} is not a directory")
    staging = bots / f".incoming-{os.getpid()}-{time.monotonic_ns()}"
    files, size = copy_bot(src, staging, max_mb * 1024 * 1024, max_files)
    try:
        words = check_command(command, staging)
        with open_store(store_args, create=True) as store:
            acct = store.account(account)
            if acct is None:
                raise SubmitError(f"no account named {account!r} (okgin arena account add {account} --bot)")
            # The id is the store's: stage under a temporary name, then move into place.
            sub = store.add_submission(acct.name, words, variant, "", files, size)
            final = bots / str(sub.id)
            os.rename(staging, final)
            store.set_submission_path(sub.id, str(final))
            got = store.submission(sub.id)
            assert got is not None
            return got
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="okgin arena submit", description=(
        "Store a hosted bot for a bot account: a copy of DIR and the command that starts it there, as a tournament "
        "participant's (placeholders {endpoint} {table} {name} {game}; its seat token is in OKGIN_TOKEN). The running "
        "arena plays a validation game of it against itself, then keeps it playing rated games (docs/arena.md)."))
    p.add_argument("account", help="the bot account it plays for (okgin arena account add NAME --bot)")
    p.add_argument("dir", type=Path, help="the bot's directory (copied; no symbolic link may lead out of it)")
    p.add_argument("--command", required=True, help="the command that starts it, run in its directory, e.g. "
                                                    "\"python3 bot.py {endpoint}\"")
    p.add_argument("--variant", choices=("oklahoma", "box"), default="oklahoma",
                   help="the game it plays: oklahoma (Oklahoma Gin, the default) or box (Gin in the Box); its validation "
                        "game and every rated game are of this variant (submit again to change it)")
    add_db_flags(p)
    return p


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        cfg = load_config(args.config, state=args.state, db=args.db)
        sub = submit(args, args.account, args.dir, args.command, Path(cfg.state), cfg.hosted_max_mb, cfg.hosted_max_files,
                     args.variant)
    except (SubmitError, StoreError, ConfigError) as e:
        print(f"okgin arena submit: {e}", file=sys.stderr)
        return 2
    print(f"hosted bot #{sub.id} of {sub.account} stored ({sub.files} files, {sub.bytes} bytes, plays {sub.variant}): "
          "pending its validation game (okgin arena submissions)")
    return 0


def _list_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="okgin arena submissions", description=(
        "The hosted bots' queue: pending and validating submissions, active ones with their games, failed ones with "
        "the reason (crash, illegal move, timeout, protocol error)."))
    p.add_argument("--status", choices=SUBMISSION_STATUSES, action="append", help="only these (repeatable)")
    p.add_argument("--account", help="only this account's")
    add_db_flags(p)
    return p


def main_list(argv: list[str]) -> int:
    args = _list_parser().parse_args(argv)
    try:
        with open_store(args, create=False) as store:
            subs = store.submissions(args.status, args.account)
    except StoreError as e:
        print(f"okgin arena submissions: {e}", file=sys.stderr)
        return 2
    if not subs:
        print("no submissions")
        return 0
    print(f"{'#':>4}  {'account':<20} {'status':<10} {'games':>5}  {'size':>9}  {'submitted (UTC)':<19}  {'variant':<8}  "
          "command / reason")
    for s in subs:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(s.created_ms / 1000))
        print(f"{s.id:>4}  {s.account:<20} {s.status:<10} {s.games:>5}  {s.bytes:>9}  {when:<19}  {s.variant:<8}  "
              f"{shlex.join(s.command)}")
        if s.reason:
            print(f"{'':>6}{s.reason}")
    return 0
