"""Triton's interpreter, patched to run what a GPU runs (and to run it faster).

Interpreted only: `patch` applies every patch once per process, after mode.load imported
Triton. Each says which releases it is for and why; none changes what a kernel computes on a
GPU, only that the interpreter computes the same, or fails where the GPU would.
"""

import inspect
from functools import cached_property
from pathlib import Path

import numpy as np
import torch

from norm_katas.checks.triton_engine import mode


def patch() -> None:
    """Patch the interpreter, each patch at most once per process."""
    _index_loop_bounds()
    _loop_variables_as_tensors()
    _scalar_conditions_kept_boolean()
    _grids_as_tuples()
    _floats_as_float32()
    _no_unread_overflow_checks()
    _numpy_dtypes_remembered()
    _scan_builtins_once()
    _patch_lang_once()
    _autotune_untimed()
    _interpret_libdevice()


# True while the autotuner runs a config to time it (interpreted: each config once): a launch
# that is not the kernel's own work, which memory.Audit's traffic does not count.
TRIAL = [False]


def _autotune_untimed() -> None:
    """Let @triton.autotune choose among several configs in the interpreter.

    With more than one config the autotuner times each with its benchmarker, which needs a GPU
    driver ("0 active drivers"): a correct autotuned kernel failed every check on the CPU.
    Interpreted, each config's launch runs once, every access audited as in any launch, and
    all time the same, so the first config is kept, as on a GPU the fastest would be. Those
    trial launches are not the kernel's own work: a call's traffic leaves them out (TRIAL).
    Triton 3.0 times with the autotuner module's do_bench; later releases ask the
    Autotuner's do_bench property (a cached one in 3.9) for one.
    """
    from triton.runtime import autotuner

    def once(kernel_call, *args, quantiles=None, **kwargs):
        TRIAL[0] = True
        try:
            kernel_call()
        finally:
            TRIAL[0] = False
        return [1.0] * len(quantiles) if quantiles else 1.0

    for name in ("do_bench", "do_bench_cudagraph"):
        if callable(getattr(autotuner, name, None)):
            setattr(autotuner, name, once)
    if isinstance(autotuner.Autotuner.__dict__.get("do_bench"), property | cached_property):
        autotuner.Autotuner.do_bench = property(lambda self: once)


# libdevice functions that triton.language has under the same name: forwarded there when
# interpreted. libdevice's own are extern calls into CUDA's library, which the interpreter
# cannot make (Triton 3.9's module of stubs even returns None).
_LIBDEVICE_AS_TL = {
    "rsqrt": "rsqrt", "rsqrt_rn": "rsqrt", "sqrt": "sqrt", "sqrt_rn": "sqrt_rn", "exp": "exp",
    "exp2": "exp2", "log": "log", "log2": "log2", "sin": "sin", "cos": "cos", "fabs": "abs",
    "floor": "floor", "ceil": "ceil", "erf": "erf", "fma": "fma", "div_rn": "div_rn",
    "fmax": "maximum", "fmin": "minimum",
}  # fmt: skip
LACKING: list[str] = []  # the libdevice functions a call used that the interpreter lacks


def _interpret_libdevice() -> None:
    """Run triton.language.extra.libdevice in the interpreter: a kernel after Liger-Kernel's
    RMSNorm (libdevice.rsqrt) failed every check on the CPU. Functions that triton.language
    also has are forwarded to it; any other is recorded in LACKING when called, so that the
    grading says the engine cannot run it, never that the learner's code is wrong."""
    import importlib

    def forward_to(name: str, tl_name: str):
        def call(*args, **kwargs):
            kwargs.pop("_builder", None), kwargs.pop("_semantic", None)
            return getattr(mode.tl, tl_name)(*args, **kwargs)

        call.__name__, call.__module__ = name, __name__
        return call

    def lacking(name: str):
        def call(*args, **kwargs):
            LACKING.append(name)
            raise NotImplementedError(f"Triton's interpreter cannot run libdevice.{name}")

        call.__name__, call.__module__ = name, __name__
        return call

    for module_name in ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice"):
        try:
            module = importlib.import_module(module_name)
        except Exception:  # not in this release
            continue
        for name, member in list(vars(module).items()):
            if not inspect.isfunction(member) or member.__module__ != module_name:
                continue  # what the module imports, or one forwarded already
            tl_name = _LIBDEVICE_AS_TL.get(name)
            setattr(module, name, forward_to(name, tl_name) if tl_name else lacking(name))


def lacking_message(name: str, device: torch.device) -> str:
    """Why a call that ran libdevice.<name> cannot be graded here."""
    engine = mode.engine_name(device)
    return (
        f"{engine} cannot run libdevice.{name}, which your kernel calls (it calls "
        "into CUDA's own math library), so the grader cannot tell whether the kernel is right. "
        "Use triton.language's own function where it has one (tl.rsqrt, tl.sqrt, tl.exp, ...), "
        "or grade with --device cuda on an NVIDIA GPU, where Triton compiles the kernel."
    )


def _index_loop_bounds() -> None:
    """Let interpreted kernels loop over `range(0, N, BLOCK)` with numpy 2.4 or later.

    Before Triton 3.8 the interpreter turned a scalar argument such as N into a Python int with
    int() of a one-element array, which numpy 2.4 refuses ("only 0-dimensional arrays can be
    converted to Python scalars"), so the row loop of Triton's own LayerNorm tutorial failed.
    Triton 3.8 takes the element out first; do the same for older releases.
    """
    from triton.runtime import interpreter

    patch_tensor = interpreter._patch_lang_tensor

    def patch_tensor_and_index(tensor, *args, **kwargs):
        patch_tensor(tensor, *args, **kwargs)
        tensor.__index__ = lambda self: int(self.handle.data.item())

    interpreter._patch_lang_tensor = patch_tensor_and_index


def _loop_variables_as_tensors() -> None:
    """Give an interpreted kernel's loop variable what compiled Triton gives it: a tensor.

    Compiled, `for r in range(pid, M, NPROG)` (or tl.range) makes r a scalar tensor of its
    bounds' integer type (int64 if one of them is), so a persistent grid's `r.to(tl.int64)`
    works. Every release's interpreter (3.0 to 3.9) runs Python's range over the bounds made
    ints, so r was an int and `.to` raised AttributeError at the learner's line: a verdict of
    the interpreter's. During a launch the kernel's module sees a `range` that yields such
    tensors (unless it defines its own), and so does tl.range; tl.static_range still yields
    ints, as compiled it yields constants.
    """
    from triton.runtime import interpreter

    tl, run = mode.tl, interpreter.GridExecutor.__call__
    if getattr(run, "norm_katas_loops", False):
        return

    def wide(bound) -> bool:
        if isinstance(bound, tl.tensor):
            return bound.dtype.primitive_bitwidth > 32
        value = getattr(bound, "value", bound)  # a constexpr's
        return not -(2**31) <= value < 2**31

    def as_tensors(values: range, bounds: tuple):
        dtype, np_dtype = (tl.int64, np.int64) if any(map(wide, bounds)) else (tl.int32, np.int32)
        for value in values:
            yield tl.tensor(interpreter.TensorHandle(np.array([value], np_dtype), dtype), dtype)

    def loop_range(*bounds):
        return as_tensors(range(*bounds), bounds)

    def tensors_from(interpreted_range):
        def loop_range(*bounds, **options):
            return as_tensors(interpreted_range(*bounds, **options), bounds)

        loop_range.norm_katas_loops = True
        return loop_range

    def launched(self, *args, **kwargs):
        names = self.fn.__globals__
        mine = "range" not in names  # a module's own range is left alone
        if mine:
            names["range"] = loop_range
        try:
            return run(self, *args, **kwargs)
        finally:
            if mine and names.get("range") is loop_range:
                del names["range"]

    patch_lang, compiled_range = interpreter._patch_lang, tl.core.range

    def patch_lang_and_range(fn):
        """The interpreter's tl.range (Python's range) wrapped; a scope's restore drops it."""
        scope = patch_lang(fn)
        for lang in (tl, tl.core):
            interpreted = lang.range
            if interpreted is not compiled_range and not hasattr(interpreted, "norm_katas_loops"):
                lang.range = tensors_from(interpreted)
        return scope

    launched.norm_katas_loops = True
    interpreter.GridExecutor.__call__ = launched
    interpreter._patch_lang = patch_lang_and_range


def _scalar_conditions_kept_boolean() -> None:
    """Let a scalar condition widen to a block as a condition: `(cols < N) & (row < M)`.

    The interpreter's comparisons keep their operands' integer type on the result's handle
    (its values are booleans), and a splat takes its numpy type from the handle: `row < M`
    splat to a block became integers (ones and zeros, int32 or int64), the `&` with the block's
    mask too, and tl.load refused the mask ("mask has unsupported dtype"), at the learner's
    line (3.0 and 3.9 alike). Compiled, both sides are int1 and the mask is one. A splat of
    booleans now stays boolean.
    """
    from triton.runtime.interpreter import InterpreterBuilder, TensorHandle

    splat = InterpreterBuilder.create_splat
    if getattr(splat, "norm_katas_boolean", False):
        return

    def create_splat(self, *args):  # (ret_ty, arg) in 3.9, (arg, shape) in 3.0
        out = splat(self, *args)
        arg = next(a for a in args if isinstance(a, TensorHandle))
        if arg.data.dtype == np.bool_ and out.data.dtype != np.bool_:
            return TensorHandle(out.data.astype(np.bool_), mode.tl.int1)
        return out

    create_splat.norm_katas_boolean = True
    InterpreterBuilder.create_splat = create_splat


def _grids_as_tuples() -> None:
    """A launch grid given as a list works on a GPU: the compiled launch takes only its length
    and items (kernel[[n]], or a grid lambda returning [n], as Triton's layer-norm tutorial and
    Liger-Kernel write it). The interpreter pads it with `grid + (1,) * ...`, a TypeError for a
    list, raised at the learner's launch line: a verdict of the interpreter's, not of their
    code. Lists are made tuples before it sees them."""
    from triton.runtime.interpreter import GridExecutor

    init = GridExecutor.__init__
    if getattr(init, "norm_katas_tuples", False):
        return

    def as_tuple(grid):
        return tuple(grid) if isinstance(grid, list) else grid

    def __init__(self, fn, arg_names, grid, *rest, **kwargs):
        if callable(grid):
            computes = grid

            def grid(meta):
                return as_tuple(computes(meta))

        init(self, fn, arg_names, as_tuple(grid), *rest, **kwargs)

    __init__.norm_katas_tuples = True
    GridExecutor.__init__ = __init__


def _floats_as_float32() -> None:
    """Hand interpreted kernels a float argument (eps) as Triton's compiler does: a float32
    scalar, not a Python float.

    Compiled, `eps` is a float32 value of the kernel: `eps.to(tl.float32)` (Liger-Kernel's
    RMSNorm kernels) works, and `x * eps` on float16 x computes in float32. The interpreter
    in every release from 3.0 passes the Python float through, so the first raised
    AttributeError ("'float' object has no attribute 'to'") and the second rounded to float16:
    the learner would be graded on what the interpreter does, not on what the GPU does.
    """
    from triton.runtime import interpreter

    tl = mode.tl
    convert = interpreter._implicit_cvt
    if getattr(convert, "norm_katas_floats", False):
        return

    def implicit_cvt(arg):
        if type(arg) is float:  # not a bool, an int or a numpy scalar: those go as before
            handle = interpreter.TensorHandle(np.array([arg], dtype=np.float32), tl.float32)
            return tl.tensor(handle, tl.float32)
        return convert(arg)

    implicit_cvt.norm_katas_floats = True
    interpreter._implicit_cvt = implicit_cvt


def _no_unread_overflow_checks() -> None:
    """Spare the interpreter the integer-overflow checks whose verdict nobody reads.

    From Triton 3.2 every int32 add, sub and mul of a kernel (offsets, masks) also computes the
    result in int64 and compares it with int32's bounds, for a device_assert that only debug
    mode keeps: without it the result is thrown away. Interpreted, that is about a sixth of a
    Triton kata's grading. Compiled without debug, Triton leaves the checks out; so does the
    interpreter now, with the same values (its options never turn debug on; if they did, the
    checks would stay).
    """
    import dataclasses

    from triton.runtime import interpreter

    builder = getattr(interpreter, "interpreter_builder", None)
    options = getattr(builder, "options", None)
    if getattr(options, "sanitize_overflow", False) and not getattr(options, "debug", True):
        builder.options = dataclasses.replace(options, sanitize_overflow=False)


def _numpy_dtypes_remembered() -> None:
    """The interpreter's numpy dtype for each Triton dtype, looked up once.

    Every interpreted operation asks for it, and Triton (3.0 to 3.9) builds its whole table of
    dtypes again each time: a twentieth of a Triton kata's grading. The answer depends on the
    dtype alone (dtypes compare by value), so it is kept; an unknown dtype raises as before.
    """
    from triton.runtime import interpreter

    lookup = interpreter._get_np_dtype
    if getattr(lookup, "norm_katas_remembered", False):
        return
    known: dict = {}

    def get_np_dtype(tt_dtype):
        try:
            return known[tt_dtype]
        except KeyError:
            known[tt_dtype] = found = lookup(tt_dtype)
            return found
        except TypeError:  # not hashable: ask Triton every time
            return lookup(tt_dtype)

    get_np_dtype.norm_katas_remembered = True
    interpreter._get_np_dtype = get_np_dtype


def _scan_builtins_once() -> None:
    """Patch the same attributes as the interpreter, without listing whole modules each time.

    Before every launch, and before every call of a jit function from a kernel (each tl.sum,
    tl.max, ...), the interpreter lists every member of triton.language, its tensor class and
    tl.math with inspect.getmembers, to wrap those that are Triton builtins. That listing was a
    third of grading an interpreted kernel. The builtins among a module's members are the same
    every time: list them once, while nothing is patched, then patch exactly those that are
    still builtins, as the interpreter would.
    """
    from triton.runtime import interpreter

    tl = mode.tl
    patch_builtin = interpreter._patch_builtin
    if getattr(patch_builtin, "norm_katas_scanned", False):
        return
    names: dict[int, tuple[str, ...]] = {}

    def builtins(pkg) -> tuple[str, ...]:
        if id(pkg) not in names:
            names[id(pkg)] = tuple(n for n, m in inspect.getmembers(pkg) if tl.core.is_builtin(m))
        return names[id(pkg)]

    def scan_once(pkg, *args, **kwargs):
        for name in builtins(pkg):
            member = getattr(pkg, name)
            if tl.core.is_builtin(member):
                interpreter._patch_attr(pkg, name, member, *args, **kwargs)

    # Listed now, before any kernel ran in this process: nothing is patched yet.
    for pkg in (tl, tl.core, tl.tensor, tl.math, getattr(tl.core, "tensor_descriptor_base", None)):
        if pkg is not None:
            builtins(pkg)
    scan_once.norm_katas_scanned = True
    interpreter._patch_builtin = scan_once


class _SkippedScope:
    """What a patching of triton.language already in effect returns: nothing to undo."""

    def restore(self) -> None:
        pass


def _patch_lang_once() -> None:
    """Patch triton.language once per launch, not again at every jit call inside the kernel.

    Each call of a jit function from an interpreted kernel (tl.sum, tl.max, ...) patches the
    language modules in its globals again, as the launch did: a sixth of grading a kernel
    that reduces in a loop. Within a launch, a patching of modules that this launch has
    patched already is skipped. A launch begins with nothing taken as patched, and a scope
    that is restored (Triton 3.2 on) takes its modules back out.
    """
    from triton.runtime import interpreter

    patch_lang, executor = interpreter._patch_lang, interpreter.GridExecutor
    if getattr(patch_lang, "norm_katas_once", False):
        return
    # The ids of the modules that the running launch has patched; None between launches.
    launch: list[set[int] | None] = [None]

    class _Scope:
        def __init__(self, scope, mine: set[int]) -> None:
            self.scope, self.mine = scope, mine

        def restore(self) -> None:
            if launch[0] is not None:
                launch[0].difference_update(self.mine)
            self.scope.restore()

    def once(fn):
        patched = launch[0]
        if patched is None:  # outside a launch: as Triton does
            return patch_lang(fn)
        langs = {id(v) for v in fn.__globals__.values() if v is mode.tl or v is mode.tl.core}
        if langs and langs <= patched:
            return _SkippedScope()
        scope = patch_lang(fn)
        mine = langs - patched
        patched.update(mine)
        return scope if scope is None else _Scope(scope, mine)

    run = executor.__call__

    def launched(self, *args, **kwargs):
        launch[0] = set()
        try:
            return run(self, *args, **kwargs)
        finally:
            launch[0] = None

    once.norm_katas_once = True
    interpreter._patch_lang = once
    executor.__call__ = launched


def annotations_trap(kata, error: Exception) -> str | None:
    """Triton 3.0/3.1's interpreter and `from __future__ import annotations` do not mix."""
    if not mode.INTERPRETED or "constexpr" not in str(error):
        return None
    release = mode.triton.__version__
    if mode.version(release) >= (3, 2):
        return None
    try:
        source = Path(kata.path).read_text(errors="replace")
    except OSError:
        return None
    if "from __future__ import annotations" not in source:
        return None
    return (
        f"your file has `from __future__ import annotations`, so Triton "
        f"{release}'s interpreter reads the annotation tl.constexpr as a string and "
        f"does not treat your block size as a compile-time constant ({type(error).__name__}: "
        f"{str(error).strip()[:120]}). Remove that import: Triton needs the real annotation."
    )
