"""Each check's time limit, as pytest-timeout asks for it: a limits.Budget of CPU time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from norm_katas.runtime import limits


class CheckTimer:
    """Each check's time limit. pytest-timeout reads --timeout and the `timeout` marker and asks
    for a timer per check; in a grading, the timer is a limits.Budget that counts the check's
    setup, call and teardown (not pytest's report of a failure, which reads source files, nor
    the checklist). Elsewhere (the self-tests) pytest-timeout's own timer runs."""

    def __init__(self) -> None:
        self.grading = False  # set once the kata's checklist is built
        self.budget: limits.Budget | None = None  # the running check's time limit
        self._in_phase = False  # inside a check's setup, call or teardown

    @pytest.hookimpl(optionalhook=True)
    def pytest_timeout_set_timer(self, item: pytest.Item, settings: Any) -> bool | None:
        if not self.grading:
            return None
        self.budget = limits.Budget(float(settings.timeout), item.name, settings.method)
        if self._in_phase:  # timeout_func_only: set from inside the call
            self.budget.start()
        return True

    @pytest.hookimpl(optionalhook=True)
    def pytest_timeout_cancel_timer(self, item: pytest.Item) -> bool | None:
        if self.budget is None:
            return None
        self.budget.close()
        self.budget = None
        return True

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Iterator[None]:
        yield from self._counted()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        yield from self._counted()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Iterator[None]:
        yield from self._counted()

    def _counted(self) -> Iterator[None]:
        self._in_phase = True
        if self.budget is not None:
            self.budget.start()
        try:
            yield
        finally:
            self._in_phase = False
            if self.budget is not None:
                self.budget.stop()
