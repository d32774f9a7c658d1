"""What every check runs under (torch's loggers muted, uninitialized memory filled), and which
of its captured output is the learner's."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator

from norm_katas.runtime import torch_compat

# A line of torch's C++ log (c10's LOG(WARNING), glog's format) on the process's stderr:
# "[W1125 16:34:13.431000 7197 ProcessGroupGloo.cpp:123] ...".
_TORCH_CPP_LOG = re.compile(
    r"^\[?[DIWEF]\d{4} \d\d:\d\d:\d\d\.\d+(?: +\d+)? [^\s\]]+\.(?:cpp|cc|cu|h|hpp):\d+\] "
)


@contextlib.contextmanager
def torch_log_muted() -> Iterator[None]:
    """torch's own loggers say nothing during a check: their records (fake tensors' "failed
    while attempting to run meta", with its traceback, when simulated CUDA cannot run an op)
    would land in the check's captured stderr and pass for the learner's prints. The
    learner's own loggers are left alone."""
    loggers = [
        logger
        for name, logger in list(logging.Logger.manager.loggerDict.items())
        if isinstance(logger, logging.Logger) and (name == "torch" or name.startswith("torch."))
    ]
    before = [logger.disabled for logger in loggers]
    for logger in loggers:
        logger.disabled = True
    try:
        yield
    finally:
        for logger, disabled in zip(loggers, before, strict=True):
            logger.disabled = disabled


@contextlib.contextmanager
def uninitialized_memory_filled() -> Iterator[None]:
    """torch.empty and its kin return NaN (integers: their largest value) during a check, as
    torch does under use_deterministic_algorithms: memory the code allocates and never writes
    reads the same on every run. Left as it was, it held whatever the allocator's last user
    left there, so that a buffer made with torch.empty instead of torch.zeros failed one run
    and passed the next, where the garbage happened to be zeros. warn_only: torch's choice of
    algorithms is otherwise the learner's, and an op with no deterministic version only warns."""
    import torch.utils.deterministic

    before = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.utils.deterministic.fill_uninitialized_memory,
    )
    if before[0] and not before[1]:  # the learner's own strict setting stays
        yield
        return
    torch_compat.set_deterministic(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        yield
    finally:
        torch_compat.set_deterministic(before[0], warn_only=before[1])
        torch.utils.deterministic.fill_uninitialized_memory = before[2]


def learners_output(captured: str) -> str:
    """A check's captured output without torch's C++ log lines, which its C++ code writes to
    the process's stderr itself: torch's words, not the learner's."""
    if "] " not in captured:
        return captured
    return "".join(
        line for line in captured.splitlines(keepends=True) if not _TORCH_CPP_LOG.match(line)
    )
