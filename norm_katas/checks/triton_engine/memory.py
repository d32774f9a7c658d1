"""Every load and store of an interpreted kernel, checked by address against the tensors its
launch was given, from first element to last.

Interpreted only. The interpreter makes a kernel's memory accesses through one extension
module (_interpreter.load, .store, atomics) in every release from 3.0 on: `audit` wraps it
once (AuditedMemory). While a call is audited (Oversight.run sets Audit.known), an access
outside every tensor of its launch is recorded and turned off, so that it touches nothing;
each access is also handed to the call's race analysis (races.Races), where one is asked for,
and counted (Traffic: how often each element was read, and the widest access), where that is.
"""

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import torch

from norm_katas.checks import shape_of
from norm_katas.checks.triton_engine.interpreter import TRIAL
from norm_katas.checks.triton_engine.races import Races


def audit() -> None:
    """Wrap the interpreter's memory accesses (audited) and its masked loads (poisoned)."""
    from triton.runtime import interpreter

    if not isinstance(interpreter._interpreter, AuditedMemory):
        interpreter._interpreter = AuditedMemory(interpreter._interpreter)
    builder = interpreter.interpreter_builder
    load = getattr(builder, "create_masked_load", None)
    if callable(load) and not getattr(load, "norm_katas_poisoned", False):
        builder.create_masked_load = _poisoned(load)


@dataclass
class Region:
    start: int  # bytes
    end: int
    name: str  # "x", "the weight", ...
    elements: int
    params: list[str] = field(default_factory=list)  # the kernel arguments that point into it


@dataclass
class Traffic:
    """What the loads and stores of one audited call did to one tensor: how many times each of
    its elements was read, and its widest access (a kernel's block: its registers)."""

    name: str  # "x", "dy", "the (2, 64) float32 tensor allocated", ...
    reads: np.ndarray  # per element, first to last (strides included): the loads that read it
    widest: int = 0  # lanes of the widest load or store that touched it, masked lanes included
    widest_verb: str = ""  # "read" or "wrote"
    widest_kernel: str = ""  # the kernel that made it

    @property
    def most_reads(self) -> int:
        """The most times any one element was read."""
        return int(self.reads.max(initial=0))


@dataclass
class Stray:
    verb: str  # "read" or "wrote"
    address: int  # the first address outside every region
    itemsize: int
    addresses: np.ndarray  # every address outside every region in this access, once each
    program: tuple
    regions: list  # the launch's regions, to say where the address is
    kernel: str  # the launched kernel's name, "" where it has none


class Audit:
    """While a call is audited: the regions each launch may touch (its tensor arguments'
    elements, from first to last), and every access outside them."""

    known: dict[int, Region] | None = None  # storage address -> what the grader made there
    regions: list[Region] | None = None  # those of the running launch
    kernel = ""  # the running launch's kernel, by name
    strays: ClassVar[list[Stray]] = []
    races: Races | None = None  # the running call's, where the suite asks for them
    # The programs of each launch that run, by their first grid index; None: every one.
    sample: frozenset[int] | None = None
    # Masked loads without `other` that left lanes undefined (read NaN here) in this call.
    undefined = 0
    # Each region's traffic in this call (by its first byte), where the suite counts it.
    traffic: dict[int, Traffic] | None = None

    @classmethod
    def allowed(cls, verb: str, ptrs, mask, itemsize: int):
        """The mask with every lane outside the regions turned off, each such lane recorded:
        the access goes on safely (never outside memory the grader knows) and is reported."""
        if cls.regions is None:
            return mask
        ptrs = np.asarray(ptrs, dtype=np.uint64)
        active = np.broadcast_to(np.asarray(mask, dtype=bool), ptrs.shape)
        inside = cls._inside(ptrs, np.uint64(itemsize))
        stray = active & ~inside
        if not stray.any():
            return mask
        from triton.runtime.interpreter import interpreter_builder

        program = tuple(getattr(interpreter_builder, "grid_idx", None) or ())
        first = int(ptrs[stray].flat[0])
        outside = np.unique(ptrs[stray])
        cls.strays.append(Stray(verb, first, itemsize, outside, program, cls.regions, cls.kernel))
        return np.ascontiguousarray(active & inside)

    # The running launch's regions as sorted bounds (starts, ends), for the list they were
    # made from: every load and store asks, thousands of times a grading.
    _bounds: tuple[list[Region] | None, np.ndarray, np.ndarray] | None = None

    @classmethod
    def _inside(cls, ptrs: np.ndarray, itemsize: np.uint64) -> np.ndarray:
        """Whether each access of `itemsize` bytes at ptrs lies within one of the regions."""
        regions = cls.regions or []
        if cls._bounds is None or cls._bounds[0] is not regions:
            ordered = sorted(regions, key=lambda r: r.start)
            starts = np.array([r.start for r in ordered], dtype=np.uint64)
            ends = np.array([r.end for r in ordered], dtype=np.uint64)
            cls._bounds = (regions, starts, ends)
        _, starts, ends = cls._bounds
        if len(starts) == 0:
            return np.zeros(ptrs.shape, dtype=bool)
        if len(starts) > 1 and (starts[1:] < ends[:-1]).any():  # overlapping: each in turn
            inside = np.zeros(ptrs.shape, dtype=bool)
            for start, end in zip(starts, ends, strict=True):
                inside |= (ptrs >= start) & (ptrs + itemsize <= end)
            return inside
        # Regions apart from each other: the one an address can lie in starts last before it.
        at = np.searchsorted(starts, ptrs, side="right").astype(np.int64) - 1
        return (at >= 0) & (ptrs + itemsize <= ends[np.maximum(at, 0)])

    @classmethod
    def record(cls, kind: int, ptrs, mask) -> None:
        """An access by the running program, for the race analysis (if one is asked for)."""
        if cls.races is not None and cls.regions is not None:
            cls.races.record(kind, ptrs, mask)

    @classmethod
    def tally(cls, verb: str, ptrs, mask, itemsize: int) -> None:
        """An access by the running program, counted in the traffic of every region it touched
        (where the call counts traffic, and outside the autotuner's trial launches): its lanes,
        and for a load each element it read."""
        if cls.traffic is None or cls.regions is None or TRIAL[0]:
            return  # not counted, or the autotuner timing a config: not the kernel's work
        ptrs = np.asarray(ptrs, dtype=np.uint64)
        active = np.broadcast_to(np.asarray(mask, dtype=bool), ptrs.shape)
        for r in cls.regions:
            inside = active & (ptrs >= r.start) & (ptrs + np.uint64(itemsize) <= r.end)
            if not inside.any():
                continue
            traffic = cls.traffic.get(r.start)
            if traffic is None:
                reads = np.zeros(r.elements, dtype=np.int64)
                traffic = cls.traffic[r.start] = Traffic(r.name, reads)
            if ptrs.size > traffic.widest:
                traffic.widest, traffic.widest_verb = ptrs.size, verb
                traffic.widest_kernel = cls.kernel
            if verb == "read":
                size = max((r.end - r.start) // max(r.elements, 1), 1)
                np.add.at(traffic.reads, ((ptrs[inside] - np.uint64(r.start)) // size), 1)

    @classmethod
    def launch(cls, arg_names, args, kwargs, kernel: str = "the kernel") -> None:
        """A launch begins: its regions, one per storage its tensor arguments point into."""
        if cls.known is None:
            return
        if cls.races is not None:
            cls.races.begin(kernel)
        cls.kernel = kernel
        named = [*zip(arg_names, args, strict=False), *kwargs.items()]
        regions: dict[int, Region] = {}
        while named:
            name, value = named.pop(0)
            if isinstance(value, tuple):  # a tuple of tensors (newer Triton)
                named += [(f"{name}[{i}]", v) for i, v in enumerate(value)]
                continue
            value = getattr(value, "base", value)  # triton.reinterpret, a TensorDescriptor
            if not isinstance(value, torch.Tensor):
                continue
            storage = value.untyped_storage()
            base = storage.data_ptr()
            if base not in regions:
                regions[base] = cls.known.get(base) or Region(
                    base, base + storage.nbytes(), f"a {shape_of(value)} tensor",
                    storage.nbytes() // max(value.element_size(), 1),
                )  # fmt: skip
                regions[base].params = []
            regions[base].params.append(name)
        cls.regions = list(regions.values())
        if cls.races is not None:
            cls.races.regions = cls.regions


class AuditedMemory:
    """The interpreter's memory module, every access checked by Audit while a call is audited."""

    def __init__(self, real) -> None:
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def load(self, ptrs, mask, other, dtype, *rest):
        mask = Audit.allowed("read", ptrs, mask, np.dtype(dtype).itemsize)
        Audit.record(Races.LOAD, ptrs, mask)
        Audit.tally("read", ptrs, mask, np.dtype(dtype).itemsize)
        return self._real.load(ptrs, mask, other, dtype, *rest)

    def store(self, ptrs, values, mask, *rest):
        mask = Audit.allowed("wrote", ptrs, mask, np.asarray(values).dtype.itemsize)
        Audit.record(Races.STORE, ptrs, mask)
        Audit.tally("wrote", ptrs, mask, np.asarray(values).dtype.itemsize)
        return self._real.store(ptrs, values, mask, *rest)

    def atomic_rmw(self, op, ptrs, values, mask, *rest):
        mask = Audit.allowed("wrote", ptrs, mask, np.asarray(values).dtype.itemsize)
        Audit.record(Races.ATOMIC, ptrs, mask)
        old = self._real.atomic_rmw(op, ptrs, values, mask, *rest)
        if Audit.races is not None:
            from triton.runtime.interpreter import _interpreter

            def undo(where, values):  # an exchange refused: the elements as they were
                everywhere = np.ones(np.shape(where), dtype=bool)
                self._real.atomic_rmw(_interpreter.RMW_OP.XCHG, where, values, everywhere, *rest)

            swap = op == _interpreter.RMW_OP.XCHG
            old = Audit.races.exchanged(swap, ptrs, values, mask, old, undo)
        return old

    def atomic_cas(self, ptrs, cmp, values, *rest):
        everywhere = np.ones(np.shape(ptrs), dtype=bool)
        if not Audit.allowed("wrote", ptrs, everywhere, np.asarray(values).dtype.itemsize).all():
            raise RuntimeError("atomic_cas outside the kernel's tensors (see the grader's report)")
        Audit.record(Races.ATOMIC, ptrs, everywhere)
        old = self._real.atomic_cas(ptrs, cmp, values, *rest)
        if Audit.races is not None:

            def undo(where, cmp, values):
                self._real.atomic_cas(where, cmp, values, *rest)

            old = Audit.races.compared(ptrs, cmp, values, old, undo)
        return old


def _poisoned(load):
    """A masked load without `other` leaves its masked lanes undefined (Triton's docs): the
    interpreter reads zeros there, which a kernel that sums them would get away with. They
    read NaN here instead (floats only), so that relying on them shows in the output."""
    from triton.runtime import interpreter

    def poisoned(ptrs, mask, other, *rest):
        if other is None:
            try:
                dtype = interpreter._get_np_dtype(ptrs.get_element_ty())
                if np.issubdtype(dtype, np.floating):
                    Audit.undefined += not np.all(mask.data)
                    nan = np.full(np.shape(ptrs.data), np.nan, dtype=dtype)
                    other = interpreter.TensorHandle(nan, ptrs.get_element_ty())
            except (AttributeError, TypeError):  # another Triton's internals: zeros, as before
                pass
        return load(ptrs, mask, other, *rest)

    poisoned.norm_katas_poisoned = True
    poisoned.norm_katas_recorded = True
    return poisoned


def stray_message(given: str, advice: str) -> str:
    """What the first access outside the kernel's tensors was, for the learner."""
    strays = Audit.strays
    first = strays[0]
    regions = first.regions
    before = [r for r in regions if r.end <= first.address]
    if before:
        r = max(before, key=lambda r: r.end)
        n = (first.address - r.end) // first.itemsize
        where = "right after the end of" if n == 0 else f"{n} elements after the end of"
    else:
        after = [r for r in regions if r.start > first.address]
        r = min(after, key=lambda r: r.start) if after else None
        n = (r.start - first.address) // first.itemsize if r else 0
        where = f"{n} elements before the start of"
    target = f"{r.name} ({r.elements} elements, passed as {', '.join(r.params)})" if r else "?"
    verbs = " and ".join(dict.fromkeys(s.verb for s in strays))
    program = f"program {first.program[0]}" if first.program else "a program"
    # Elements, each once: the same address read in two passes, or read then written, is one.
    total = len(np.unique(np.concatenate([s.addresses for s in strays])))
    # Named, where a call launches several kernels (forward, dx, the sum of partial rows).
    names = [n for n in dict.fromkeys(s.kernel for s in strays) if n and n != "the kernel"]
    kernel, were = (f"the kernel {names[0]}" if names else "the kernel"), "it was"
    if len(names) > 1:
        kernel, were = "the kernels " + " and ".join(names), "they were"
        program += f" of {first.kernel}"
    return (
        f"{given}: {kernel} {verbs} {total} element(s) outside the tensors {were} given, the "
        f"first ({program}) {where} {target}. On a GPU such an access reads garbage or "
        f"crashes, whatever the values there: the grader flags it by address. {advice}"
    )
