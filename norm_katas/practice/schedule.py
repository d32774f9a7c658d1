"""What to practise when: a spaced-repetition schedule, derived from the history each time it is
asked (there is no second store to drift from it), by FSRS, the scheduler Anki uses (the `fsrs`
package, pinned in pyproject.toml).

A sitting is one go at a kata, and one FSRS review: a mock interview (its gradings), or practice
and notebook gradings and peeks at its solution, each less than SITTING_GAP after the one before
(watch mode grades every save: twenty failing saves on the way to a solution are one sitting).
A grading of the untouched stub, or of a file that did not load, is no attempt and no part of
one. Each sitting is rated (rate(); docs/practice.md has the table):

- Again: not solved, or the solution peeked at before it was solved (a peek alone is a sitting);
- Hard: solved, but with hints asked for on a grading that failed, or over the suggested minutes
  (a mock's clock; in practice, from its first grading to the one that solved it: a time it took
  at least);
- Good: solved without hints, in time (practice is untimed: Good unless it took longer);
- Easy: a mock solved without hints in under half the suggested minutes.

Every grading mode is rated by these rules, whatever the mode: a new way of grading (issue 40's
test-writing mode, say) needs only its mode in history.GRADING_MODES.

The ratings go through fsrs's Scheduler, oldest first, with no learning steps (a kata is not
practised again ten minutes later: a first Again or Hard is due the next day) and no fuzz (the
same history always gives the same dates). Its card says when the kata is due. What is "today"
follows `now`'s time zone (the machine's, by default; a test or an example passes its own).
"""

from __future__ import annotations

import contextlib
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from norm_katas.content import registry
from norm_katas.practice import history
from norm_katas.practice.wording import sentence

if TYPE_CHECKING:
    import fsrs

FSRS = "fsrs==6.3.2"  # pyproject.toml pins the same (a self-test compares)
SITTING_GAP = timedelta(hours=1)
DIFFICULTIES = ("easy", "medium", "hard")  # the registry's, easiest first
AGAIN, HARD, GOOD, EASY = "Again", "Hard", "Good", "Easy"  # fsrs.Rating's names
HORIZON_DAYS = 14  # the notebook's chart: what is due in the next two weeks
_FROZEN: datetime | None = None  # the docs' examples: a fixed clock (frozen())


class Unavailable(Exception):
    """The fsrs package is not installed in this Python; str() says how to install it."""


def scheduler() -> fsrs.Scheduler:
    """FSRS's scheduler as norm-katas uses it: its default weights and desired retention (0.9),
    no learning or relearning steps (a kata a day at most, not a card every ten minutes), and
    no fuzz (deterministic)."""
    try:
        import fsrs
    except ImportError:
        raise Unavailable(
            f"The practice schedule needs the fsrs package ({FSRS}), which this Python "
            f"({sys.executable}) does not have. Install it with `{sys.executable} -m pip install "
            f"'{FSRS}'` (in a notebook: `%pip install '{FSRS}'`), or use the nox sessions, "
            "which install it themselves."
        ) from None
    return fsrs.Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)


def now() -> datetime:
    """This moment, in the machine's time zone (or the frozen clock of frozen())."""
    return _FROZEN if _FROZEN is not None else datetime.now().astimezone()


@contextlib.contextmanager
def frozen(at: datetime) -> Iterator[None]:
    """Make now() return `at` (time-zone aware) meanwhile: the docs' examples, on a fixed day."""
    global _FROZEN
    before, _FROZEN = _FROZEN, at
    try:
        yield
    finally:
        _FROZEN = before


def _when(event: history.Event) -> datetime:
    return datetime.fromisoformat(event.at).astimezone(timezone.utc)


# -- sittings and their ratings -----------------------------------------------------------


@dataclass
class Sitting:
    """One go at a kata: its events (gradings that are attempts, peeks), oldest first."""

    kata: registry.Kata
    events: list[history.Event]
    mock: bool = False

    @property
    def start(self) -> datetime:
        return _when(self.events[0])

    @property
    def end(self) -> datetime:
        return _when(self.events[-1])

    @property
    def gradings(self) -> list[history.Event]:
        return [e for e in self.events if e.mode != "peek"]

    @property
    def solved(self) -> history.Event | None:
        """The first grading that solved the interview core, if any did."""
        return next((e for e in self.gradings if e.solved), None)

    @property
    def peeked(self) -> bool:
        """A peek at the solution before it was solved (after it: comparing, no giveaway)."""
        solved = self.solved
        upto = self.events if solved is None else self.events[: self.events.index(solved)]
        return any(e.mode == "peek" for e in upto)

    @property
    def hinted(self) -> bool:
        """Hints asked for on a grading that did not solve the core: hints were shown."""
        return any(e.hints and not e.solved for e in self.gradings)

    @property
    def seconds(self) -> float | None:
        """How long solving took: a mock's clock, or in practice from the sitting's first
        grading to the one that solved it (a time it took at least). None: not solved."""
        solved = self.solved
        if solved is None:
            return None
        if self.mock:
            return solved.seconds
        return (_when(solved) - _when(self.gradings[0])).total_seconds()

    @property
    def rating(self) -> str:
        """Again, Hard, Good or Easy, by the rules of the module's docstring."""
        if self.peeked or self.solved is None:
            return AGAIN
        suggested = self.kata.minutes * 60
        took = self.seconds
        if self.hinted or (took is not None and took > suggested):
            return HARD
        if self.mock and took is not None and took < suggested / 2:
            return EASY
        return GOOD


def sittings(kata: registry.Kata, events: list[history.Event]) -> list[Sitting]:
    """The kata's sittings, in the order they ended. `events`: the whole history or the kata's."""
    mine = [
        e
        for e in events
        if e.kata == kata.name
        and (e.mode == "peek" or (e.mode in history.GRADING_MODES and e.attempt))
    ]
    mine.sort(key=_when)  # the history is in the order recorded; a sitting is in time
    mocks: dict[str, Sitting] = {}
    found: list[Sitting] = []
    current: Sitting | None = None
    for e in mine:
        if e.mode == "mock":
            key = e.mock_id or f"{e.at}"  # every mock grading has its id; an odd row alone
            if key not in mocks:
                mocks[key] = Sitting(kata, [], mock=True)
                found.append(mocks[key])
            mocks[key].events.append(e)
        elif current is not None and _when(e) - current.end < SITTING_GAP:
            current.events.append(e)
        else:
            current = Sitting(kata, [e])
            found.append(current)
    return sorted(found, key=lambda s: s.end)


# -- the cards ----------------------------------------------------------------------------


@dataclass
class Card:
    """A kata's place in the schedule: its sittings and the FSRS card they make (None: never
    tried, nothing scheduled)."""

    kata: registry.Kata
    sittings: list[Sitting]
    card: Any = None  # fsrs.Card

    @property
    def due(self) -> datetime | None:
        return None if self.card is None else self.card.due

    @property
    def last(self) -> Sitting | None:
        return self.sittings[-1] if self.sittings else None


def cards(at: datetime | None = None, events: list[history.Event] | None = None) -> list[Card]:
    """Every kata's card, in the registry's order, from the history (or `events`) as of `at`
    (now()); events after `at` do not count. Unavailable: no fsrs here."""
    sched = scheduler()  # first: it says how to install fsrs where it is missing
    import fsrs

    at = at or now()
    utc = at.astimezone(timezone.utc)
    events = [e for e in (history.events() if events is None else events) if _when(e) <= utc]
    found = []
    for number, kata in enumerate(registry.load()):
        mine = sittings(kata, events)
        if not mine:
            found.append(Card(kata, []))
            continue
        card = fsrs.Card(card_id=number + 1, due=mine[0].end)  # no clock read, no sleep
        for sitting in mine:
            card, _ = sched.review_card(card, fsrs.Rating[sitting.rating], sitting.end)
        found.append(Card(kata, mine, card))
    return found


# -- the plan for today -------------------------------------------------------------------


@dataclass
class Entry:
    """A kata in today's plan: due, new (never tried) or ahead (not due yet), and why."""

    card: Card
    kind: str  # "due", "new", "ahead"
    why: str

    @property
    def kata(self) -> registry.Kata:
        return self.card.kata


@dataclass
class Plan:
    at: datetime
    entries: list[Entry] = field(default_factory=list)

    def of(self, kind: str) -> list[Entry]:
        return [e for e in self.entries if e.kind == kind]

    @property
    def first(self) -> Entry | None:
        return self.entries[0] if self.entries else None


def day(moment: datetime, at: datetime) -> date:
    """The calendar day of `moment` where `at` is (its time zone)."""
    return moment.astimezone(at.tzinfo).date()


def days_ago(moment: datetime, at: datetime) -> str:
    n = (day(at, at) - day(moment, at)).days
    return "today" if n <= 0 else "yesterday" if n == 1 else f"{n} days ago"


def due_words(due: datetime, at: datetime) -> str:
    """'due today', 'due 3 days ago', 'due tomorrow', 'due in 5 days'."""
    n = (day(due, at) - day(at, at)).days
    if n == 0:
        return "due today"
    if n < 0:
        return "due yesterday" if n == -1 else f"due {-n} days ago"
    return "due tomorrow" if n == 1 else f"due in {n} days"


def times(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


def last_words(card: Card, at: datetime) -> str:
    """What the kata's last sitting was, in words: the reason behind its due date."""
    sitting = card.last
    assert sitting is not None
    when = days_ago(sitting.end, at)
    suggested = card.kata.minutes
    solved = sitting.solved
    if sitting.peeked:
        return f"peeked at the solution {when}, before solving it"
    if solved is None:
        counts = Counter(e.headline for e in sitting.gradings if e.headline)
        if counts:
            headline, n = counts.most_common(1)[0]
            return f"not solved {when}: failed '{sentence(card.kata, headline)}' {times(n)}"
        last = sitting.gradings[-1]
        score = f" (core {last.passed}/{last.total})" if last.total else ""
        return f"not solved {when}{score}"
    hints = " with hints" if sitting.hinted else ""
    took = sitting.seconds
    if sitting.mock and took is not None:
        minutes = max(1, round(took / 60))
        return f"last solved {when}{hints} in a mock, in {minutes} min (suggested {suggested})"
    if took is not None and took > suggested * 60:
        minutes = round(took / 60)
        after = f"{minutes} min after its first grading"
        return f"last solved {when}{hints}, {after} (suggested {suggested})"
    return f"last solved {when}{hints}, in practice (untimed)"


def plan(at: datetime | None = None, events: list[history.Event] | None = None) -> Plan:
    """Today's plan: the katas due (most overdue first), then those never tried (easiest first,
    in the registry's order within a difficulty), then the rest, weakest first: the soonest
    due, which FSRS expects to fall below 90% recall first. Unavailable: no fsrs here."""
    at = at or now()
    all_cards = cards(at, events)
    order = {kata.name: i for i, kata in enumerate(registry.load())}
    due, new, ahead = [], [], []
    for card in all_cards:
        if card.due is None:
            rank = (
                DIFFICULTIES.index(card.kata.difficulty)
                if card.kata.difficulty in DIFFICULTIES
                else len(DIFFICULTIES)
            )
            why = f"{card.kata.difficulty}, never tried"
            new.append(((rank, order[card.kata.name]), Entry(card, "new", why)))
            continue
        why = f"{last_words(card, at)}; {due_words(card.due, at)}"
        if day(card.due, at) <= day(at, at):
            due.append(((card.due, order[card.kata.name]), Entry(card, "due", why)))
        else:
            key = (card.due, card.card.stability, order[card.kata.name])
            ahead.append((key, Entry(card, "ahead", why)))
    entries = [e for group in (due, new, ahead) for _, e in sorted(group, key=lambda p: p[0])]
    return Plan(at, entries)


def fit(entries: list[Entry], minutes: float) -> list[Entry]:
    """A session of `minutes`: the entries in order, each that still fits (its suggested
    minutes) taken, the others passed over."""
    chosen, left = [], minutes
    for entry in entries:
        if entry.kata.minutes <= left:
            chosen.append(entry)
            left -= entry.kata.minutes
    return chosen
