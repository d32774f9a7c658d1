"""What every backward check does: make a kata's inputs, call the learner's forward and
backward directly (with a recording ctx), run autograd through the built-in, and compare."""

from __future__ import annotations

from typing import Any

import torch

from norm_katas.checks.autograd import call_backward, call_forward, learner_line
from norm_katas.checks.backward.description import Description, Grads
from norm_katas.checks.comparisons import expect_close, expect_grads_close, expect_tensor
from norm_katas.runtime.outcomes import fail


class Harness(Description):
    """A kata's inputs, the learner's calls and the reference's, for the checks to build on."""

    def inputs(
        self,
        *shape: int,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str = "cpu",
        spread: float = 2.0,
        centre: float = 1.0,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """x of `shape` and a random weight and bias along its feature dim."""
        d = shape[self.feature_dim]
        x = torch.randn(shape, dtype=dtype, device=device) * spread + centre
        w = torch.randn(d, dtype=dtype, device=device) + 1
        b = torch.randn(d, dtype=dtype, device=device)
        return x, w, b

    def run(
        self, kata: Any, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float,
        grad_out: torch.Tensor, *, given: str,
    ) -> tuple[torch.Tensor, Grads]:  # fmt: skip
        """The learner's forward and backward, called directly: (y, (grad_x, grad_w, grad_b)),
        without grad_b where there is no bias.

        They get copies (in the same layout): the caller's tensors stay as they were, so that
        what the check compares with is computed from the inputs it names, whatever the
        learner's code writes into (test_input_unmodified judges that)."""
        function = getattr(kata, self.function)
        x, w, b, grad_out = (_copy(t) for t in (x, w, b, grad_out))
        y, ctx = call_forward(function, *self.tensors(x, w, b), eps)
        y = expect_tensor(y, "forward")
        grads = call_backward(function, ctx, grad_out, given=given)
        return y, grads[: len(self.grad_names)]

    def reference(
        self, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float, grad_out: torch.Tensor
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor | None]]:
        """Autograd through the built-in: (y, {input, weight[, bias] gradients})."""
        xi, wi, bi = (t.detach().clone().requires_grad_() for t in (x, w, b))
        y = self.builtin(xi, wi, bi, eps)
        y.backward(grad_out)
        return y.detach(), self.named(tuple(t.grad for t in self.tensors(xi, wi, bi)))

    def run_on_layout(
        self, kata: Any, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor,
        grad_out: torch.Tensor, *, given: str,
    ) -> tuple[torch.Tensor, Grads]:  # fmt: skip
        """run() on a non-contiguous x or grad_out: a view that cannot take that layout fails
        as this check's mistake, with the check's own hints, rather than as a crash, whose
        hint speaks of shapes that do not line up."""
        try:
            return self.run(kata, x, w, b, 1e-5, grad_out, given=given)
        except RuntimeError as e:
            if "view size is not compatible" not in str(e):
                raise
            said = str(e).strip().rstrip(".")
            fail(f"{given}: your code raised RuntimeError: {said}{learner_line(e)}")

    # -- comparisons with autograd -----------------------------------------------------------

    def expect_grad_x(
        self, kata: Any, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float,
        grad_out: torch.Tensor, *, given: str,
    ) -> None:  # fmt: skip
        """The learner's grad_x, as autograd through the built-in gives it."""
        _, (grad_x, *_) = self.run(kata, x, w, b, eps, grad_out, given=given)
        _, want = self.reference(x, w, b, eps, grad_out)
        expect_grads_close({"input": grad_x}, {"input": want["input"]}, given=given, backward=True)

    def expect_all_grads(
        self, kata: Any, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor,
        grad_out: torch.Tensor, *, given: str,
    ) -> None:  # fmt: skip
        """Every gradient the learner's backward returns, as autograd through the built-in
        gives them."""
        _, grads = self.run(kata, x, w, b, 1e-5, grad_out, given=given)
        _, want = self.reference(x, w, b, 1e-5, grad_out)
        expect_grads_close(self.named(grads), want, given=given, backward=True)

    def expect_like_autograd(
        self, kata: Any, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor,
        grad_out: torch.Tensor, *, given: str,
    ) -> None:  # fmt: skip
        """The learner's forward and every gradient, as autograd through the built-in gives
        them."""
        y, grads = self.run(kata, x, w, b, 1e-5, grad_out, given=given)
        want_y, want = self.reference(x, w, b, 1e-5, grad_out)
        expect_close(y, want_y, given=given)
        expect_grads_close(self.named(grads), want, given=given, backward=True)


def _copy(t: Any) -> Any:
    """A copy of a tensor in the same layout (strides kept: a transposed tensor stays one);
    anything else as it is."""
    return t.clone() if isinstance(t, torch.Tensor) else t
