"""Triton, imported compiled on a GPU or interpreted elsewhere, and what the messages call it.

Imported by `load`, once start() has chosen: @triton.jit reads TRITON_INTERPRET when a kernel
is defined, Triton's own library kernels (tl.sum, ...) when triton.language is first imported.
The other modules read `mode.triton`, `mode.tl` and `mode.INTERPRETED` at their call, never
a copy taken at import.
"""

import os
import sys
from typing import Any

import torch

triton: Any = None
tl: Any = None
INTERPRETED = False


def version(text: str) -> tuple[int, int]:
    parts = text.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return (0, 0)


def engine_name(device: torch.device) -> str:
    return (
        f"Triton {triton.__version__}'s interpreter"
        if INTERPRETED
        else f"Triton {triton.__version__} on {device}"
    )


def load(device: torch.device) -> str | None:
    """Import Triton for this device, interpreted unless it is CUDA: why it cannot grade here,
    or None."""
    global triton, tl, INTERPRETED
    INTERPRETED = device.type != "cuda"
    if INTERPRETED:
        os.environ["TRITON_INTERPRET"] = "1"
    else:
        os.environ.pop("TRITON_INTERPRET", None)  # graded compiled, as it runs in production
    try:
        import triton
        import triton.language as tl
    except Exception as e:  # an ImportError, or a broken install
        return (
            f"This kata needs Triton (triton>=3.0), which is not installed for this Python "
            f"({sys.executable}; importing it raised {type(e).__name__}: {e}). Install it with "
            "pip install 'triton>=3.0' (Linux; no GPU needed: without one the grader runs your "
            "kernel in Triton's interpreter), then grade again."
        )
    if version(triton.__version__) < (3, 0):
        return f"This kata needs Triton 3.0 or later; this Python has {triton.__version__}."
    return _library_mode_problem()


def _library_mode_problem() -> str | None:
    """Reconcile Triton's library kernels with the mode chosen, if triton.language was imported
    before (torch._dynamo imports it): or say why grading cannot go on."""
    from triton.runtime.jit import JITFunction

    built_for = "compiled" if isinstance(tl.standard.sum, JITFunction) else "interpreted"
    if built_for == "interpreted" and not INTERPRETED:
        return (
            "TRITON_INTERPRET=1 was set when Triton was imported, so it runs every kernel in its "
            "interpreter. Unset it to grade on the GPU (the grader turns the interpreter on by "
            "itself when it grades on the CPU)."
        )
    if built_for == "compiled" and INTERPRETED:
        # A call to tl.sum (a JITFunction) from an interpreted kernel would raise "Cannot call
        # @triton.jit'd outside of the scope of a kernel": run such calls through the
        # interpreter, as they would have run had the interpreter been on at import.
        from triton.runtime.interpreter import InterpretedFunction

        interpreted: dict[int, object] = {}

        def call(self, *args, **kwargs):
            if id(self) not in interpreted:
                interpreted[id(self)] = InterpretedFunction(self.fn)
            return interpreted[id(self)](*args, **kwargs)

        JITFunction.__call__ = call
    return None
