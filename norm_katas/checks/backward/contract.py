"""The checks of what a backward kata's code is and does, whatever its values: a Function that
autograd records, a wrapper that passes eps, a gradient per input, inputs left as they were,
no built-in, no Python loop, no autograd inside backward, only what backward needs saved, no
tensor made on the CPU; and what --perf times."""

from __future__ import annotations

import math
from typing import Any

import torch

from norm_katas.checks.autograd import (
    call_backward,
    call_forward,
    expect_backward_by_hand,
    expect_backward_shapes,
    expect_saves_only_what_backward_needs,
    expect_through_function,
)
from norm_katas.checks.backward.harness import Harness
from norm_katas.checks.comparisons import expect_close, expect_tensor, shape_of
from norm_katas.checks.execution import (
    expect_from_scratch,
    expect_function_follows_device,
    expect_vectorized,
)
from norm_katas.checks.suite import PerfCase
from norm_katas.runtime.outcomes import fail


class ContractChecks(Harness):
    """The checks of the Function's code as code, one method each: `shape` is the input's."""

    def is_an_autograd_function(self, kata: Any, device: torch.device, shape: tuple) -> None:
        x, w, b = self.inputs(*shape, device=device)

        def run() -> Any:
            params = (t.requires_grad_() for t in self.tensors(x, w, b)[1:])
            # eps given: what the wrapper does without it is a check of its own (a stretch one
            # for RMSNorm's eps=None), not this one's to decide.
            return getattr(kata, self.wrapper)(x, *params, 1e-5)

        expect_through_function(
            getattr(kata, self.function), self.function, run, caller=self.wrapper,
            inputs=", ".join(self.tensor_names),
        )  # fmt: skip

    def wrapper_passes_eps(self, kata: Any, device: torch.device, shape: tuple) -> None:
        """The wrapper gives what the learner's own Function gives with eps=1e-5 when called
        without eps, and with eps=0.1 when given it: on small inputs (spread 0.01, variance
        about 1e-4), where 1e-5 against 1e-6 or 0 moves the output by some percent. Compared
        with the learner's Function, not the built-in, so that only the wrapper decides."""
        function, wrapper = getattr(kata, self.function), getattr(kata, self.wrapper)
        x, w, b = self.inputs(*shape, device=device, spread=0.01)
        tensors, names = self.tensors(x, w, b), ", ".join(self.tensor_names[1:])
        for eps, passed in ((1e-5, ""), (0.1, ", eps=0.1")):
            args = tensors if not passed else (*tensors, eps)
            given = (
                f"{self.wrapper}(x {shape_of(x)}, {names}{passed}) on small inputs, "
                f"compared with {self.function}.apply(x, {names}, {eps:g})"
            )
            want = expect_tensor(function.apply(*tensors, eps), f"{self.function}.apply")
            expect_close(expect_tensor(wrapper(*args), self.wrapper), want, given=given)

    def backward_returns_a_grad_per_input(
        self, kata: Any, device: torch.device, shape: tuple
    ) -> None:
        x, w, b = self.inputs(*shape, device=device)
        given = self.describe(x)
        function = getattr(kata, self.function)
        inputs = (*self.tensors(x, w, b), 1e-5)
        _, ctx = call_forward(function, *inputs)
        result = call_backward(function, ctx, torch.randn_like(x), given=given)
        names = (*(f"grad_{n}" for n in self.tensor_names), "the None for eps")
        expect_backward_shapes(result, inputs, names=names, given=given)

    def input_unmodified(self, kata: Any, device: torch.device, shape: tuple) -> None:
        """x after forward, then x and grad_out after backward, in every dtype (x.float() or
        x.to(dtype) returns x itself when it has that dtype already, and an in-place step on
        the result writes into the caller's x), with a weight and, where it may be None,
        without (then grad_out itself may be the gradient backward works on)."""
        function = getattr(kata, self.function)
        weighted = (True, False) if self.weight_optional else (True,)
        for dtype in (torch.float64, torch.float32, torch.float16):
            for with_weight in weighted:
                x, w, b = self.inputs(*shape, dtype=dtype, device=device)
                w = w if with_weight else None
                grad_out = torch.randn_like(x)
                x0, g0 = x.clone(), grad_out.clone()
                given = self.describe(x) + ("" if with_weight else " with weight=None")
                try:
                    _, ctx = call_forward(function, *self.tensors(x, w, b), 1e-5)
                except Exception:
                    if with_weight:
                        raise
                    continue  # code that cannot take weight=None: the suite's own check says so
                if not torch.equal(x, x0):
                    fail(f"{given}: forward changed its input x in place.")
                try:
                    call_backward(function, ctx, grad_out, given=given)
                except Exception:
                    if with_weight:
                        raise
                    continue
                if not torch.equal(x, x0):
                    fail(
                        f"{given}: backward changed x, the caller's input, in place. A tensor "
                        "forward saved may be x itself (.float() or .to() to the dtype x has "
                        "already returns x): compute into new tensors."
                    )
                if not torch.equal(grad_out, g0):
                    fail(f"{given}: backward changed grad_out in place.")

    def from_scratch(self, kata: Any, device: torch.device, shape: tuple) -> None:
        """Forward, then backward, each watched for the built-ins: the message names which."""
        x, w, b = self.inputs(*shape, device=device)
        grad_out = torch.randn_like(x)
        given = self.describe(x)
        function = getattr(kata, self.function)
        custom_setup = getattr(function, "setup_context", None) is not getattr(
            torch.autograd.Function, "setup_context", None
        )
        _, ctx = expect_from_scratch(
            lambda: call_forward(function, *self.tensors(x, w, b), 1e-5), self.forbidden,
            who="forward or setup_context" if custom_setup else "forward",
        )  # fmt: skip
        expect_from_scratch(
            lambda: call_backward(function, ctx, grad_out, given=given), self.forbidden,
            who="backward",
        )  # fmt: skip

    def vectorized(self, kata: Any, device: torch.device, small: tuple, large: tuple) -> None:
        small_in, large_in = self.inputs(*small, device=device), self.inputs(*large, device=device)

        def both(x, w, b, grad_out):  # type: ignore[no-untyped-def]
            return self.run(kata, x, w, b, 1e-5, grad_out, given=self.describe(x))

        expect_vectorized(
            both,
            (*small_in, torch.ones_like(small_in[0])),
            (*large_in, torch.ones_like(large_in[0])),
            given=self.function,
        )

    def backward_by_hand(self, kata: Any, device: torch.device, shape: tuple) -> None:
        x, w, b = self.inputs(*shape, device=device)
        function = getattr(kata, self.function)
        _, ctx = call_forward(function, *self.tensors(x, w, b), 1e-5)
        given = self.describe(x)
        expect_backward_by_hand(
            lambda: call_backward(function, ctx, torch.randn_like(x), given=given), given=given,
            grads="grad_x, grad_weight and grad_bias" if self.bias else "grad_x and grad_weight",
        )  # fmt: skip

    def saves_only_what_backward_needs(self, kata: Any, device: torch.device, shape: tuple) -> None:
        x, w, b = self.inputs(*shape, device=device)
        given = self.describe(x)
        # x an activation, with autograd history as a layer's input has; weight and bias leaves.
        xr, wr, br = (t.clone().requires_grad_() for t in (x, w, b))
        applied = expect_tensor(
            getattr(kata, self.wrapper)(*self.tensors(xr * 1.0, wr, br), 1e-5), self.wrapper
        )
        _, ctx = call_forward(getattr(kata, self.function), *self.tensors(x, w, b), 1e-5)
        # one x-sized tensor, plus a few numbers per statistic and per parameter
        statistics = x.numel() // math.prod(x.shape[d] for d in self.statistic_dims(x))
        allowance = 4 * statistics + 4 * x.shape[self.feature_dim]
        expect_saves_only_what_backward_needs(applied, ctx, x, allowance=allowance, given=given)

    def follows_device(self, kata: Any, device: torch.device, shape: tuple) -> None:
        x, w, b = self.inputs(*shape, dtype=torch.float32)

        def both(x, w, b, grad_out):  # type: ignore[no-untyped-def]
            return self.run(kata, x, w, b, 1e-5, grad_out, given=self.describe(x))

        expect_function_follows_device(
            both, x, w, b, torch.randn_like(x), device=device, given=self.describe(x)
        )

    def perf_case(self, kata: Any, device: torch.device, shape: tuple) -> PerfCase:
        """What --perf times: the learner's wrapper and the built-in, forward and backward."""
        inputs = self.inputs(*shape, dtype=torch.float32, device=device)
        x, w, b = (t.requires_grad_() for t in inputs)
        return PerfCase(
            given=f"{self.wrapper} on x {shape_of(x)}",
            mine=lambda: getattr(kata, self.wrapper)(*self.tensors(x, w, b)),
            builtin=lambda: self.builtin(x, w, b, 1e-5), builtin_name=self.builtin_name,
            inputs=self.tensors(x, w, b), bytes_moved=2 * x.nbytes,
        )  # fmt: skip
