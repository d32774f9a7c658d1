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
    program sets with a successful tl.atomic_cas (a spin lock; or a tl.atomic_xchg that finds
    another value, a test-and-set) and clears with an atomic; the accesses between are
    protected by it. Atomics among themselves never race.

    A lock that another program has taken and released before is, on a GPU, one this program
    may find held: its first take of it is refused (its tl.atomic_cas answers the value the
    holder wrote, and changes nothing). A spin lock asks again and takes it; a program that
    goes on without it races, and one that never asks again loses its update.
    """

    LOAD, STORE, ATOMIC = 0, 1, 2
    SPINS = 1000  # failed atomic_cas in a row on one element: in the interpreter, a deadlock

    def __init__(self) -> None:
        self.found: list[str] = []  # what each race or deadlock was, for the learner
        # Those of found that end in their own advice (stores that overlap): the kata's advice
        # on sharing an element between programs does not fit them.
        self.advised: set[int] = set()
        self.kernel = "the kernel"
        # addresses, program, kind, and the elements the program held as locks then
        self.chunks: list[tuple[np.ndarray, int, int, tuple[int, ...]]] = []
        self.programs: dict[tuple, int] = {}
        self.held: dict[int, list[int]] = {}  # program -> the lock elements it holds
        self.spins: dict[tuple[int, int], int] = {}
        # (program, lock element) told it is held -> by what: "tl.atomic_cas", "tl.atomic_xchg"
        self.refused: dict[tuple[int, int], str] = {}
        self.taken: set[tuple[int, int]] = set()  # (program, lock element) taken at least once
        self.freed: dict[int, int] = {}  # lock element -> the last program that released it
        # The running launch's regions (memory.Audit.launch sets them), to name an element.
        self.regions: list[Region] = []

    def begin(self, kernel: str) -> None:
        self.finish()
        self.kernel = kernel
        self.chunks, self.programs, self.held, self.spins = [], {}, {}, {}
        self.refused, self.taken, self.freed = {}, set(), {}

    def _current(self) -> int:
        return self.programs.setdefault(program(), len(self.programs))

    def record(self, kind: int, ptrs, mask) -> None:
        ptrs = np.asarray(ptrs, dtype=np.uint64)
        active = np.broadcast_to(np.asarray(mask, dtype=bool), ptrs.shape)
        program = self._current()
        locks = self.held.get(program)
        self.chunks.append((ptrs[active].ravel(), program, kind, tuple(locks or ())))
        if kind == self.STORE and locks:  # a lock let go with a plain store: let go all the same
            self.released(ptrs, mask)  # (the store itself races with the others' atomic_cas)

    def compared(self, ptrs, cmp, values, old, undo) -> np.ndarray:
        """After an atomic_cas: a success that changed the element releases it where the
        program holds it as a lock (tl.atomic_cas(lock, 1, 0)), and takes a lock on it
        otherwise, unless that is refused (the program's first take of a lock another program
        used); returns what
        the kernel reads. undo(ptrs, cmp, values) is the interpreter's atomic_cas, to put a
        refused element back."""
        program = self._current()
        shape = np.shape(old)
        ptrs, cmp, values, old = np.broadcast_arrays(
            *(np.ravel(np.asarray(a)) for a in (ptrs, cmp, values, old))
        )
        refused = []
        held = self.held.get(program) or []
        for i, (address, c, v, o) in enumerate(
            zip(ptrs.tolist(), cmp.tolist(), values.tolist(), old.tolist(), strict=True)
        ):
            address = int(address)
            if o == c and v != c and address in held:  # the holder sets it back: a release
                held.remove(address)
                self.freed[address] = program
            elif o == c and v != c:
                if not self._take(program, address, "tl.atomic_cas"):
                    refused.append(i)
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
        if refused:
            undo(ptrs[refused], values[refused], cmp[refused])  # the element as it was: free
        return _answer(old, values, refused, shape)

    def exchanged(self, swap: bool, ptrs, values, mask, old, undo) -> np.ndarray:
        """After an atomic read-modify-write: on a lock the program holds, it lets go of it;
        an exchange (swap) that finds another value takes a lock (test-and-set), refused as
        compared() refuses one. Returns what the kernel reads; undo(ptrs, values) writes the
        elements of a refused exchange back."""
        program = self._current()
        held = set(self.held.get(program) or ())
        self.released(ptrs, mask)
        if not swap:
            return old
        shape = np.shape(old)
        ptrs, values, old, active = np.broadcast_arrays(
            *(np.ravel(np.asarray(a)) for a in (ptrs, values, old, mask))
        )
        refused = []
        for i, (address, v, o, on) in enumerate(
            zip(ptrs.tolist(), values.tolist(), old.tolist(), active.tolist(), strict=True)
        ):
            address = int(address)
            if not on or address in held or o == v:
                continue  # a release, or a take that found the lock held
            if not self._take(program, int(address), "tl.atomic_xchg"):
                refused.append(i)
        if refused:
            undo(ptrs[refused], old[refused])  # the elements as they were: free
        return _answer(old, values, refused, shape)

    def _take(self, program: int, address: int, by: str) -> bool:
        """A program's atomic (`by`) would take the lock at address: whether it does. Its first
        take of a lock another program has used is refused, as if that one held it still."""
        used = self.freed.get(address, program) != program
        if used and (program, address) not in self.refused:
            self.refused[(program, address)] = by
            return False
        self.held.setdefault(program, []).append(address)
        self.taken.add((program, address))
        self.spins.pop((program, address), None)
        return True

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
                self.freed[address] = program

    def _name(self, program: int) -> str:
        # As the launch's grid is written: 5 in a 1-D grid, (0, 1) in a 2-D one, for every
        # program that a message names.
        index = next(k for k, v in self.programs.items() if v == program)
        axes = max(
            (1 + max((i for i, x in enumerate(k) if x), default=0) for k in self.programs),
            default=1,
        )
        return str(index[0]) if axes == 1 else f"({', '.join(map(str, index[:axes]))})"

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

    def _element(self, address: int) -> str:
        """Which element of which tensor an address is, for the learner."""
        region = next((r for r in self.regions if r.start <= address < r.end), None)
        if region is None:
            return "an element"
        itemsize = max((region.end - region.start) // max(region.elements, 1), 1)
        return (
            f"element {(address - region.start) // itemsize} of {region.name} (passed as "
            f"{', '.join(region.params)})"
        )

    def finish(self) -> None:
        """The launch is over: find its first race, if any."""
        chunks, self.chunks = self.chunks, []
        refused, self.refused = self.refused, {}
        if self.found:
            return
        if gave_up := sorted(set(refused) - self.taken):
            program, address = gave_up[0]
            self.found.append(
                f"in {self.kernel}, program {self._name(program)} found the lock at "
                f"{self._element(address)} held (the grader made its first "
                f"{refused[(program, address)]} on it fail, since on a GPU another program that "
                "takes this lock may hold it then) and never took it: it went on without the "
                "lock, or gave up its update. A spin lock asks again until it gets the lock"
            )
            return
        if not chunks:
            return
        sizes = [len(a) for a, *_ in chunks]
        addresses = np.concatenate([a for a, *_ in chunks])
        if not len(addresses):
            return

        # A lock is an element taken and then released: one only set (a flag, a count taken
        # with tl.atomic_cas inside the lock) protects nothing. The outermost lock held counts.
        locks = [next((a for a in held if a in self.freed), 0) for *_, held in chunks]

        def spread(values: list[int]) -> np.ndarray:
            return np.repeat(np.array(values, dtype=np.int64), sizes)

        program, kind = spread([c[1] for c in chunks]), spread([c[2] for c in chunks])
        lock = spread(locks)
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
        if all(v == {"wrote"} for v in verbs.values()):  # stores only: no update is lost
            self.advised.add(len(self.found))
            self.found.append(
                f"in {self.kernel}, {self._element(address)} is stored to by {len(verbs)} "
                f"programs, and none of them reads it: {said}. On a GPU which store lands is "
                "undefined. Two programs computing one element means their offsets overlap: an "
                "offset that leaves out tl.program_id, or a row stride that is not this "
                "tensor's own, so that other elements may never be written. Give each program "
                "elements of its own, each tensor's rows at its own stride"
            )
            return
        self.found.append(
            f"in {self.kernel}, {self._element(address)} is shared by {len(verbs)} programs "
            f"with no atomic and no lock: {said}. On a GPU they run at the same time, so one "
            "program's update can be lost; the interpreter runs them one after another, which "
            "is why the values here may still come out right"
        )


def _answer(old: np.ndarray, values: np.ndarray, refused: list[int], shape: tuple) -> np.ndarray:
    """What an atomic hands the kernel: the old values, and at each refused element the value
    its holder wrote there."""
    if not refused:
        return old.reshape(shape)
    answer = old.copy()
    answer[refused] = values[refused]
    return answer.reshape(shape)
