"""The checks of a backward kata's values: forward's output and backward's gradients against
autograd through the built-in, on every shape, weight and eps the contract allows, and
gradcheck's finite differences of the learner's own forward."""

from __future__ import annotations

from typing import Any

import torch

from norm_katas.checks.autograd import (
    call_backward,
    call_forward,
    expect_backward_shapes,
    expect_gradcheck,
    learner_line,
)
from norm_katas.checks.backward.harness import Harness
from norm_katas.checks.comparisons import (
    expect_close,
    expect_grads_close,
    expect_stable_under_shift,
    expect_tensor,
    shape_of,
)
from norm_katas.runtime.outcomes import fail


class ValueChecks(Harness):
    """The checks of forward's values and backward's gradients, one method each."""

    def forward_matches_torch(
        self, kata: Any, device: torch.device, shapes: tuple[tuple, ...], small: tuple[tuple, ...]
    ) -> None:
        """On each of `shapes` in float32 and float64, then eps=0.05 on small inputs of each
        of the `small` shapes."""
        function = getattr(kata, self.function)
        for dtype in (torch.float32, torch.float64):
            for shape in shapes:
                x, w, b = self.inputs(*shape, dtype=dtype, device=device)
                y, _ = call_forward(function, *self.tensors(x, w, b), 1e-5)
                want = self.builtin(x, w, b, 1e-5)
                expect_close(expect_tensor(y, "forward"), want, given=self.describe(x))
        for shape in small:
            x, w, b = self.inputs(*shape, device=device, spread=0.1)
            y, _ = call_forward(function, *self.tensors(x, w, b), 0.05)
            want = self.builtin(x, w, b, 0.05)
            expect_close(expect_tensor(y, "forward"), want, given=self.describe(x, 0.05))

    def numerically_stable(self, kata: Any, device: torch.device, shape: tuple) -> None:
        """forward in float32 on x of mean 1000 and spread 1, against its own output for the
        same values about 0: E[x²] − E[x]² loses its digits there, a variance of the centred
        values does not (see expect_stable_under_shift)."""
        function = getattr(kata, self.function)
        x, w, b = self.inputs(*shape, dtype=torch.float32, device=device, spread=1.0, centre=1000)

        def run(v: torch.Tensor) -> Any:
            return call_forward(function, *self.tensors(v, w, b), 1e-5)[0]

        given = f"{self.describe(x)}, x = 1000 + randn"
        expect_stable_under_shift(run, x, 1000, given=given)

    def gradient_of(self, kata: Any, device: torch.device, name: str, shape: tuple) -> None:
        """The gradient of one input ("input", "weight" or "bias") alone."""
        x, w, b = self.inputs(*shape, device=device)
        grad_out = torch.randn_like(x)
        given = self.describe(x)
        _, grads = self.run(kata, x, w, b, 1e-5, grad_out, given=given)
        _, want = self.reference(x, w, b, 1e-5, grad_out)
        expect_grads_close(
            {name: self.named(grads)[name]}, {name: want[name]}, given=given, backward=True
        )

    def zero_weight_elements(self, kata: Any, device: torch.device, shape: tuple) -> None:
        """A weight with some elements exactly 0 (legal: torchvision's zero_init_residual starts
        each residual block's last norm at a zero weight): forward and every gradient, as
        autograd gives them."""
        x, w, b = self.inputs(*shape, device=device)
        w[::3] = 0.0
        grad_out = torch.randn_like(x)
        zeros = ", ".join(str(i) for i in range(0, w.numel(), 3))
        given = f"{self.describe(x)} with the weight's elements {zeros} at 0"
        self.expect_like_autograd(kata, x, w, b, grad_out, given=given)

    def gradients_match_autograd(
        self, kata: Any, device: torch.device, shapes: tuple[tuple, ...]
    ) -> None:
        for dtype in (torch.float32, torch.float64):
            for shape in shapes:
                x, w, b = self.inputs(*shape, dtype=dtype, device=device)
                grad_out = torch.randn_like(x)
                self.expect_all_grads(kata, x, w, b, grad_out, given=self.describe(x))

    def unbatched(self, kata: Any, device: torch.device, shape: tuple) -> None:
        """Forward and every gradient on an input with no batch dims, as autograd gives them.

        A dim that a 1-D input lacks (flattening dims 0 to -2, the second-to-last size) fails
        as this check's mistake, with the check's own hints, rather than as a crash, whose hint
        speaks of shapes that do not line up in forward."""
        x, w, b = self.inputs(*shape, device=device)
        grad_out = torch.randn_like(x)
        given = self.describe(x)
        try:
            self.expect_like_autograd(kata, x, w, b, grad_out, given=given)
        except (IndexError, RuntimeError) as e:
            if "out of range" not in str(e) or not learner_line(e):
                raise
            said = f"{type(e).__name__}: {str(e).strip().rstrip('.')}"
            fail(f"{given}: your code raised {said}{learner_line(e)}")

    def without_weight(self, kata: Any, device: torch.device, shape: tuple) -> None:
        """weight=None, where the kata allows it: forward gives x̂, and backward grad_x and None
        for the weight; with eps=1e-5, then eps=0.05 on small inputs, where eps shows."""
        function = getattr(kata, self.function)
        for eps in (1e-5, 0.05):
            x, _, _ = self.inputs(*shape, device=device, spread=2.0 if eps < 0.01 else 0.1)
            grad_out = torch.randn_like(x)
            given = f"{self.function} on x {shape_of(x)} with weight=None (eps={eps:g})"
            # what autograd gives first, from x and grad_out as they are; the learner gets copies
            xi = x.clone().requires_grad_()
            want_y = self.builtin(xi, None, None, eps)
            want_y.backward(grad_out)
            y, ctx = call_forward(function, *self.tensors(x.clone(), None, None), eps)
            expect_close(expect_tensor(y, "forward"), want_y.detach(), given=given)
            result = call_backward(function, ctx, grad_out.clone(), given=given)
            names = (*(f"grad_{n}" for n in self.tensor_names), "the None for eps")
            inputs = (*self.tensors(x, None, None), eps)
            expect_backward_shapes(result, inputs, names=names, given=given)
            expect_grads_close({"input": result[0]}, {"input": xi.grad}, given=given, backward=True)

    def backward_eps_inside_sqrt(self, kata: Any, device: torch.device, *shapes: tuple) -> None:
        for shape in shapes:
            x, w, b = self.inputs(*shape, device=device, spread=0.1)
            grad_out = torch.randn_like(x)
            given = f"{self.describe(x, 0.05)} on small inputs"
            self.expect_grad_x(kata, x, w, b, 0.05, grad_out, given=given)

    def gradcheck(self, kata: Any, device: torch.device, *shapes: tuple) -> None:
        def fn(*tensors: torch.Tensor) -> Any:
            return getattr(kata, self.wrapper)(*tensors, 1e-5)

        for shape in shapes:
            inputs = self.tensors(*self.inputs(*shape, device=device))
            inputs = tuple(t.requires_grad_() for t in inputs)
            given = f"torch.autograd.gradcheck({self.wrapper}, ...) on x {shape_of(inputs[0])}"
            expect_gradcheck(fn, inputs, given=given)
