"""Data races between the programs of one interpreted launch, found by address.

The interpreter runs a launch's programs one after another, so a race cannot show in its
values: Races watches which program touched which element instead (memory.AuditedMemory
tells it every access), and says what the first race was.
"""

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from norm_katas.checks.triton_engine.memory import Region


def program() -> tuple:
    """The running program's grid index (interpreted)."""
    from triton.runtime.interpreter import interpreter_builder

    return tuple(getattr(interpreter_builder, "grid_idx", None) or ())


class Races:
    """Which program touched which address in one launch, to find the data races that the
    interpreter cannot show in values: it runs programs one after another, so a plain load, add
    and store into an element that several programs share comes out right there, while on a GPU
    the programs run at the same time and updates are lost.

    A race: two programs of one launch touch an element, at least one with a plain store (or
    one with a plain load and another with an atomic), and not all of those accesses are made
    holding the same lock. A lock is what Triton's LayerNorm tutorial uses: an element a
    program sets with a successful tl.atomic_cas (a spin lock) and clears with an atomic
    exchange; the accesses between are protected by it. Atomics among themselves never race.
    """

    LOAD, STORE, ATOMIC = 0, 1, 2
    SPINS = 1000  # failed atomic_cas in a row on one element: in the interpreter, a deadlock

    def __init__(self) -> None:
        self.found: list[str] = []  # what each race or deadlock was, for the learner
        self.kernel = "the kernel"
        self.chunks: list[tuple[np.ndarray, int, int, int]] = []  # addresses, program, kind, lock
        self.programs: dict[tuple, int] = {}
        self.held: dict[int, list[int]] = {}  # program -> the lock elements it holds
        self.spins: dict[tuple[int, int], int] = {}
        # The running launch's regions (memory.Audit.launch sets them), to name an element.
        self.regions: list[Region] = []

    def begin(self, kernel: str) -> None:
        self.finish()
        self.kernel = kernel
        self.chunks, self.programs, self.held, self.spins = [], {}, {}, {}

    def _current(self) -> int:
        return self.programs.setdefault(program(), len(self.programs))

    def record(self, kind: int, ptrs, mask) -> None:
        ptrs = np.asarray(ptrs, dtype=np.uint64)
        active = np.broadcast_to(np.asarray(mask, dtype=bool), ptrs.shape)
        program = self._current()
        locks = self.held.get(program)
        self.chunks.append((ptrs[active].ravel(), program, kind, locks[-1] if locks else 0))

    def compared(self, ptrs, cmp, values, old) -> None:
        """After an atomic_cas: a success that changed the element takes a lock on it."""
        program = self._current()
        ptrs, cmp, values, old = (np.ravel(np.asarray(a)) for a in (ptrs, cmp, values, old))
        for address, c, v, o in zip(
            ptrs.tolist(), *np.broadcast_arrays(cmp, values, old), strict=False
        ):
            if o == c and v != c:
                self.held.setdefault(program, []).append(int(address))
                self.spins.pop((program, int(address)), None)
            elif o != c:
                spun = self.spins.get((program, int(address)), 0) + 1
                self.spins[(program, int(address))] = spun
                if spun >= self.SPINS:
                    self.found.append(
                        f"in {self.kernel}, program {self._name(program)} spun {spun} times on "
                        "a tl.atomic_cas that never succeeds: the lock it waits for is held by a "
                        "program that has finished without releasing it (the interpreter runs "
                        "programs one after another), which on a GPU is a deadlock"
                    )
                    raise RuntimeError("deadlock (see the grader's report)")

    def released(self, ptrs, mask) -> None:
        """After an atomic read-modify-write: on a lock the program holds, it lets go of it."""
        program = self._current()
        locks = self.held.get(program)
        if not locks:
            return
        ptrs = np.asarray(ptrs, dtype=np.uint64)
        active = np.broadcast_to(np.asarray(mask, dtype=bool), ptrs.shape)
        for address in ptrs[active].ravel().tolist():
            if address in locks:
                locks.remove(address)

    def _name(self, program: int) -> str:
        index = next(k for k, v in self.programs.items() if v == program)
        return str(index[0]) if len(index) and not any(index[1:]) else str(index)

    def _first(self, addresses: list[int]) -> int:
        """The race to report: the first element of the first tensor, in the kernel's order of
        arguments, not the lowest address, which depends on where the allocator put each
        tensor and would name another tensor from run to run."""
        regions = list(self.regions)

        def key(address: int) -> tuple[int, int]:
            for i, r in enumerate(regions):
                if r.start <= address < r.end:
                    return i, address - r.start
            return len(regions), address

        return int(min(addresses, key=key))

    def finish(self) -> None:
        """The launch is over: find its first race, if any."""
        chunks, self.chunks = self.chunks, []
        if not chunks or self.found:
            return
        sizes = [len(a) for a, *_ in chunks]
        addresses = np.concatenate([a for a, *_ in chunks])
        if not len(addresses):
            return

        def spread(i: int) -> np.ndarray:
            return np.repeat(np.array([c[i] for c in chunks], dtype=np.int64), sizes)

        program, kind, lock = spread(1), spread(2), spread(3)
        unique, where = np.unique(addresses, return_inverse=True)
        n = len(unique)

        def per_element(ufunc, values, start):
            out = np.full(n, start, dtype=np.int64)
            ufunc.at(out, where, values)
            return out

        shared = per_element(np.minimum, program, 2**62) != per_element(np.maximum, program, -1)
        stored = per_element(np.maximum, (kind == self.STORE).astype(np.int64), 0) > 0
        loaded = per_element(np.maximum, (kind == self.LOAD).astype(np.int64), 0) > 0
        atomic = per_element(np.maximum, (kind == self.ATOMIC).astype(np.int64), 0) > 0
        lowest = per_element(np.minimum, lock, 2**62)
        unlocked = (lowest == 0) | (lowest != per_element(np.maximum, lock, -1))
        racy = shared & (stored | (loaded & atomic)) & unlocked
        if not racy.any():
            return
        address = self._first(unique[racy.nonzero()[0]].tolist())
        involved = where == np.searchsorted(unique, address)
        verbs: dict[int, set[str]] = {}
        for p, k in zip(program[involved].tolist(), kind[involved].tolist(), strict=True):
            verbs.setdefault(p, set()).add(("read", "wrote", "atomically updated")[k])
        two = list(verbs)[:2]
        said = " and ".join(
            f"program {self._name(p)} {' and '.join(sorted(verbs[p], reverse=True))} it"
            for p in two
        )
        region = next((r for r in self.regions if r.start <= address < r.end), None)
        if region is None:
            what = "an element"
        else:
            itemsize = max((region.end - region.start) // max(region.elements, 1), 1)
            what = (
                f"element {(address - region.start) // itemsize} of {region.name} (passed as "
                f"{', '.join(region.params)})"
            )
        self.found.append(
            f"in {self.kernel}, {what} is shared by {len(verbs)} programs with no atomic and "
            f"no lock: {said}. On a GPU they run at the same time, so one program's update can "
            "be lost; the interpreter runs them one after another, which is why the values "
            "here may still come out right"
        )
