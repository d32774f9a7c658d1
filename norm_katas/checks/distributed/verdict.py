"""The verdict on what the ranks did: the first problem of any rank, written for the learner.

`expect_ranks_ok` raises a NotImplementedError of a rank again (the stub is unfinished), then
fails with a rank's exception and the learner's line, a rank that died, the collectives that
diverged (told as the deadlock they would be: `divergence`), a rank stuck for good.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from norm_katas.checks import cannot_grade, fail, fail_for, fail_hung
from norm_katas.checks.distributed.rank import MARGIN_S, WAIT_S, call_kind, describe_error
from norm_katas.checks.distributed.world import RankReport
from norm_katas.runtime.loader import display_path


def _ranks(ranks: list[int]) -> str:
    """'rank 1', 'ranks 1 and 2', 'ranks 1, 2 and 3'."""
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    return f"ranks {', '.join(map(str, ranks[:-1]))} and {ranks[-1]}"


def _shape(shape: list[int]) -> str:
    return str(tuple(shape))


def _call(call: dict, *, shape: bool = True) -> str:
    """'the all_reduce in forward (training step 1), at katas/x.py line 40, of a (7,) tensor'"""
    text = f"the {call['name']} in {call['phase']}"
    if call["site"]:
        text += f" at {display_path(Path(call['site'][0]))} line {call['site'][1]}"
    if shape and call["shape"] is not None:
        text += f", on a {_shape(call['shape'])} {call['dtype']} tensor"
    return text


def divergence(reports: list[RankReport]) -> str | None:
    """Where the ranks' collectives first differ, told as the deadlock (or mix-up) it is."""
    by_group: dict[tuple, dict[int, list[dict]]] = {}
    for report in reports:
        for call in report.calls:
            by_group.setdefault(tuple(call["group"]), {})
    for report in reports:
        for members in by_group:
            if report.rank in members:
                mine = [c for c in report.calls if tuple(c["group"]) == members]
                by_group[members][report.rank] = mine
    for members, seqs in by_group.items():
        longest = max(len(s) for s in seqs.values())
        for k in range(longest):
            here = {r: (s[k] if k < len(s) else None) for r, s in seqs.items()}
            kinds = {call_kind(c) if c else None for c in here.values()}
            if len(kinds) == 1:
                shapes = {tuple(c["shape"] or ()) for c in here.values() if c}
                if len(shapes) > 1:
                    first = next(c for c in here.values() if c)
                    sizes = ", ".join(
                        f"{_shape(c['shape'])} on rank {r}" for r, c in here.items() if c
                    )
                    return (
                        f"{_call(first, shape=False)}, the ranks passed tensors of different "
                        f"shapes: {sizes}. A collective needs the same shape on every rank "
                        "(torch raises, or hangs, on a mismatch): pad to a common size, or "
                        "send something whose size does not depend on the local batch."
                    )
                continue
            for rank in sorted(here):
                call = here[rank]
                if call is None:
                    continue
                holders = [r for r, c in here.items() if c and call_kind(c) == call_kind(call)]
                missing = [
                    r for r in sorted(here) if r not in holders and
                    all(call_kind(c) != call_kind(call) for c in seqs[r][k:])
                ]  # fmt: skip
                if not missing:
                    continue
                instead: dict[str, list[int]] = {}  # what they did instead -> those ranks
                for r in missing:
                    other = here[r]
                    last = next(x.phase for x in reports if x.rank == r) or "setup"
                    if other:
                        did = f"went on to {_call(other, shape=False)}"
                    elif last == "done":  # the suite's name for after the last step
                        did = "finished every step without it"
                    else:
                        did = f"finished the step in {last} without it"
                    instead.setdefault(did, []).append(r)
                went = [f"{_ranks(rs)} {did}" for did, rs in instead.items()]
                return (
                    f"deadlock: {_ranks(missing)} never joined {_call(call)}, which "
                    f"{_ranks(holders)} called as collective #{k + 1} of group "
                    f"{list(members)}; {'; '.join(went)}. Every rank must make the same "
                    "collective calls in the same order: one that some ranks skip leaves the "
                    "others waiting forever (the grader stopped them)."
                )
            calls = "; ".join(
                f"rank {r}: {_call(c, shape=False) if c else 'none'}" for r, c in here.items()
            )
            return (
                f"the ranks called different collectives as collective #{k + 1} of group "
                f"{list(members)} ({calls}). Every rank must make the same collective calls in "
                "the same order, or they deadlock or mix up each other's tensors."
            )
    return None


def _spent(hang: dict) -> str:
    """How a stuck rank spent its time: 'ran for 7.2 s of CPU time without finishing its step'."""
    cpu, wall = hang["cpu"], hang["wall"]
    if cpu is None:
        return f"did not finish its step within {wall:.0f} s"
    if cpu >= WAIT_S + MARGIN_S:
        return f"ran for {cpu:.1f} s of CPU time without finishing its step"
    return f"waited {wall:.0f} s without finishing its step, using {cpu:.1f} s of CPU time"


def raised(e: BaseException, learner: Path) -> str:
    """'raised ValueError: ..., at katas/x.py line 40: code' for an exception in the learner's
    code (in this process)."""
    error = describe_error(e, str(learner))
    text = f": {error['text']}" if error["text"] else ""
    where = ""
    if error["file"]:
        where = f", at {display_path(Path(error['file']))} line {error['line']}: {error['code']}"
    return f"raised {error['type']}{text}{where}"


def reraise_at(error: dict) -> None:
    """Raise NotImplementedError as if from the learner's line, so that the report reads it as
    an unfinished stub (it looks for the learner's frame in the traceback)."""
    exc = NotImplementedError(error["text"])
    if error["file"] and error["line"]:
        source = "\n" * (error["line"] - 1) + "raise __exc__"
        exec(compile(source, error["file"], "exec"), {"__exc__": exc})
    raise exc


def expect_ranks_ok(
    reports: list[RankReport], *, given: str, advice: str = "", collectives_check: str = ""
) -> list[Any]:
    """Every rank must have finished; else fail with what went wrong, where. Returns the values.

    NotImplementedError on a rank is raised again here (the stub is unfinished); another
    exception names the rank and the learner's line; then a rank that died, the collectives
    that diverged (a deadlock), a rank stuck for good. collectives_check: the suite's check
    named for the ranks making the same collective calls; collectives that diverge are its
    mistake, whichever check meets them (fail_for).
    """
    advice = f" {advice}" if advice else ""
    for report in reports:
        if report.error and report.error["type"] == "NotImplementedError":
            reraise_at(report.error)
    for report in reports:
        if report.mistake and not report.stuck:
            fail(f"{given}: on rank {report.rank}, {report.mistake}")
    for report in reports:
        if report.error:
            e = report.error
            where = ""
            if e["file"]:
                where = f", at {display_path(Path(e['file']))} line {e['line']}: {e['code']}"
            rank = report.rank
            if e["type"] == "SystemExit":
                fail(f"{given}: your code called sys.exit({e['exit']!r}) on rank {rank}{where}.")
            text = f": {e['text']}" if e["text"] else ""
            fail(f"{given}: on rank {rank} your code raised {e['type']}{text}{where}.{advice}")
    for report in reports:
        if report.died and not report.died.startswith("did not finish"):
            fail(
                f"{given}: rank {report.rank} {report.died}\nDoes your code call os._exit(), "
                "or crash the interpreter?"
            )
    hung = [r for r in reports if r.died and r.hang is not None]
    for report in hung:  # stopped where the learner's code was not running: not their fault
        if report.hang["known"] and report.hang["site"] is None:
            cannot_grade(
                f"{given}: rank {report.rank} was stopped, as it {_spent(report.hang)}, but it "
                f"was in the grader's own work (at {report.hang['where']}), not in your code. "
                "The machine may be too busy, or the grader is stuck."
            )
    if hung:
        waited = next((r.stuck for r in reports if r.stuck and "neither joined" in r.stuck), "")
        said = "; ".join(
            f"{'it' if len(hung) == 1 else f'rank {r.rank}'} {_spent(r.hang)}"
            + (f", at {r.hang['site']}" if r.hang["site"] else "")
            for r in hung
        )
        fail_hung(
            f"{given}: {_ranks([r.rank for r in hung])} did not finish and "
            f"{'was' if len(hung) == 1 else 'were'} stopped: {said}\n"
            + (waited[0].upper() + waited[1:] if waited else "An endless loop?")
        )
    if (text := divergence(reports)) is not None:
        if collectives_check:
            fail_for(collectives_check, f"{given}: {text}")
        fail(f"{given}: {text}")
    for report in reports:
        if report.stuck:
            fail(f"{given}: rank {report.rank} could not complete a collective: {report.stuck}")
    return [r.value for r in reports]
