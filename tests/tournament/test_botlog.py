"""Bot logs within bounds (competition.tournament.botlog): the pieces, without processes."""

from __future__ import annotations

import io

from competition.tournament.botlog import REDACTED, BoundedLog, LogBudget, Redactor


def test_a_token_split_across_reads_is_still_redacted() -> None:
    r = Redactor([b"abcdef0123"])
    out = b"".join(r.feed(c) for c in (b"xx abcd", b"ef01", b"23 yy abcdef", b"0123")) + r.flush()
    assert out == b"xx " + REDACTED + b" yy " + REDACTED


def test_the_head_and_the_tail_are_kept_and_the_middle_is_counted() -> None:
    f = io.BytesIO()
    log = BoundedLog(f, 4000, LogBudget(10**6))
    for i in range(1000):
        log.feed(b"line %04d\n" % i)
    log.close()
    text = f.getvalue().decode()
    assert text.startswith("line 0000\n") and text.endswith("line 0999\n")
    assert "bytes of output dropped here" in text and len(f.getvalue()) < 4200


def test_the_events_budget_is_shared_and_given_back() -> None:
    budget = LogBudget(1000)
    a, b = io.BytesIO(), io.BytesIO()
    la, lb = BoundedLog(a, 10**6, budget), BoundedLog(b, 10**6, budget)
    la.feed(b"x" * 800)
    lb.feed(b"y" * 800)
    la.close()
    lb.close()
    assert a.getvalue() == b"x" * 800
    assert b.getvalue().startswith(b"y" * 200) and b"reached their limit of 1000 bytes" in b.getvalue()
    budget.give_back(la.written)
    assert budget.left == 800
