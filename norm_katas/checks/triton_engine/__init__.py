"""The Triton engine for the Triton katas: the learner's kernel run for real, and watched.

A suite declares what its function may do (an `Oversight`), starts the engine with the
module-scoped autouse fixture `engine = triton_engine.engine` (`start`, before the `kata`
fixture imports the learner's file) and calls the learner's function through `Oversight.run`,
its values checked by `Oversight.expect_values`. What the engine does:

Where the kernel runs. With `--device cuda` on a GPU, compiled by Triton as in production;
everywhere else in Triton's interpreter, so that grading works on any machine, without the
learner setting anything. `start` sets TRITON_INTERPRET (on for the CPU, off for CUDA) and
only then imports Triton: @triton.jit reads it when a kernel is defined, Triton's library
kernels (tl.sum) when triton.language is first imported. If something imported Triton earlier
(torch._dynamo does), it reconciles the library with the mode. The interpreter runs one program
at a time with numpy, so a suite's inputs should be small.

How the engine is proven. Before the learner's file loads, a probe runs small kernels of its
own on what norm and softmax kernels exercise, in float32, float16 and bfloat16: loads and
stores (masked, with `other`), casts to and from float32, products, sums and differences in
each dtype and mixed with float32, tl.sum, tl.max and tl.maximum, sqrt, rsqrt, exp and exp2,
programs at int64 row offsets. A float32 case gone wrong means nothing can be graded: the
grader says so (exit 3). A half-precision one is noted as a fault: Triton's interpreter
computes bfloat16 x bfloat16, bfloat16 + bfloat16 and bfloat16 - bfloat16 on the raw bits
(every release from 3.0 to 3.9), from 3.3 tl.sum of bfloat16 too, and in 3.9 tl.maximum of
bfloat16s. The interpreter runs a kernel's operations as methods of one builder object: each is
recorded with its operand types, and a fault is blamed on the operations only its failing case
ran. A call that ran one gets a note (`Call.fault`) that names the engine and suggests --device
cuda: its value checks skip with it, never fail, and do not count (report.py). Compiled, where
operations cannot be seen, a fault would affect every call in its dtype. The proof depends on
the installed engine alone: a long-lived parent that grades on the CPU (watch mode, a mock)
proves it once (`prepare`) for every grading it forks. Anything else that goes wrong while the
engine is set up is the grader's failure too (exit 3), never the learner's: their file has not
even loaded yet.

How every call is overseen (`Oversight.run`):
- Memory. The function gets copies of its tensor inputs whose storage runs on past their last
  element (each input's own fill after it), and every float tensor it allocates is placed in
  such a storage too, filled with SENTINEL: a kernel that reads past a row never crashes the
  grader, a store past the end of the output (or of an input the kernel updates in place) lands
  in the fence and is reported, and an element no program wrote still holds SENTINEL.
  Interpreted, every load and store (atomics too) is checked by address against the tensors
  its launch was given, from first element to last: an access outside them all fails whatever
  the values there would have given, and is turned off so that it touches nothing; a masked
  load without `other=` reads NaN in its masked lanes, which Triton leaves undefined. Where a
  suite asks (`Oversight.run(traffic=True)`), each tensor's traffic is counted too: how many
  times each element was read, and the widest access (`Call.traffic`).
  Compiled, Triton cannot be watched so: only stores past the end of a tensor, allocated or
  given, are seen.
- Torch work. The ATen operations the function runs outside Triton's own code are recorded.
  Work on the activations (the first input, or the first `Oversight.activations` inputs, what
  the function allocates, and anything computed from them) fails, copies included
  (.contiguous(), .clone(), .to(), .copy_()); allocation, the views the suite allows, and work
  on the other inputs alone do not. A call that launches no kernel fails too.
Each such failure belongs to the check the suite names for it (Oversight.in_bounds for memory,
Oversight.does_the_work for torch work), which the report ranks it as: whichever check runs
into a mistake first, the headline names it.

Each job lives in a module of its own, from the bottom up:

- mode: Triton, imported compiled or interpreted, and what the messages call it.
- interpreter: the interpreter patched to run what a GPU runs (and faster); what it cannot run.
- operations: the interpreter operations a kernel runs, recorded, for the probe to blame.
- races, memory: every access of an interpreted launch checked by address, and the data races
  between its programs.
- probe: the engine proven, its faults found and blamed on the operations a call ran.
- startup: start and prepare, which import, patch and prove, once per process.
- guarded: the function's run fenced and watched (torch work, allocations, launches).
- oversight: Oversight and Call, what a suite declares and calls.
- watched: a learner's own test (the test-writing mode) watched by address, its outcome left
  unjudged where it met an engine fault.
- suites: what the Triton suites share (the engine fixture, VIEWS, the device notes, what
  --perf times, the checks on strided rows).

A suite imports what it needs from here, never from the modules.
"""

from norm_katas.checks.triton_engine import mode
from norm_katas.checks.triton_engine.oversight import (
    Call,
    Oversight,
    expect_input_kept,
    expect_kept,
)
from norm_katas.checks.triton_engine.probe import HALF
from norm_katas.checks.triton_engine.startup import prepare, start
from norm_katas.checks.triton_engine.suites import (
    SPLITS_AND_FILLS,
    VIEWS,
    PerfSetting,
    blame_strides,
    engine,
    first_check,
    no_device_note,
    on_gpu,
    passes,
    perf_setting,
    rms_norm_reference,
    weight_unseen,
)
from norm_katas.checks.triton_engine.watched import OutsideItsTensors, watched

__all__ = [
    "HALF",
    "INTERPRETED",
    "SPLITS_AND_FILLS",
    "VIEWS",
    "Call",
    "OutsideItsTensors",
    "Oversight",
    "PerfSetting",
    "blame_strides",
    "engine",
    "expect_input_kept",
    "expect_kept",
    "first_check",
    "no_device_note",
    "on_gpu",
    "passes",
    "perf_setting",
    "prepare",
    "rms_norm_reference",
    "start",
    "watched",
    "weight_unseen",
]


def __getattr__(name: str) -> object:
    """INTERPRETED, read when asked: whether start() chose Triton's interpreter (mode)."""
    if name == "INTERPRETED":
        return mode.INTERPRETED
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
