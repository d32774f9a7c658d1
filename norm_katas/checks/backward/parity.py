"""The torch-parity checks of a backward kata: float64 computed in float64, half precision
(alone, and beside float32 parameters) computed in float32 and rounded once, and
non-contiguous inputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from norm_katas.checks.autograd import FINITE_DIFFERENCE_NOISE, finite_difference_noise
from norm_katas.checks.backward.harness import Harness
from norm_katas.checks.comparisons import (
    HALF_OFFSET,
    expect_close,
    expect_grads_close,
    expect_rounded_once,
    expect_tensor,
)
from norm_katas.checks.execution import expect_float64_arithmetic
from norm_katas.runtime.outcomes import fail

# float64 results against the built-in's, relative to the largest element: any order of float64
# operations stays below 1e-13 on the checks' inputs, float32 rounding anywhere leaves ~1e-8.
FLOAT64_RTOL = 1e-10


class ParityChecks(Harness):
    """The checks of torch parity: dtypes and layouts, one method each."""

    def computes_in_float64(self, kata: Any, device: torch.device, shape: tuple) -> None:
        x, w, b = self.inputs(*shape, device=device)
        grad_out = torch.randn_like(x)

        def forward(v: torch.Tensor) -> torch.Tensor:
            return self.run(kata, v, w, b, 1e-5, grad_out, given=self.describe(v))[0]

        given = self.describe(x)
        expect_float64_arithmetic(forward, x, given=f"{given}: forward")
        # Every gradient, not only grad_x: a backward may round one sum to float32 alone. Each
        # is linear in grad_out, so a nudge of grad_out reaches all of them; a nudge of x
        # reaches those computed from x's statistics (not the bias's, a sum of grad_out).
        for i, name in enumerate(self.grad_names):
            label = "grad_x" if name == "input" else f"grad_{name}"

            def from_x(v: torch.Tensor, i: int = i, label: str = label) -> Any:
                grad = self.run(kata, v, w, b, 1e-5, grad_out, given=self.describe(v))[1][i]
                return expect_tensor(grad, f"backward's {label}")

            def from_grad_out(g: torch.Tensor, i: int = i, label: str = label) -> Any:
                grad = self.run(kata, x, w, b, 1e-5, g, given=given)[1][i]
                return expect_tensor(grad, f"backward's {label}")

            if name != "bias":
                expect_float64_arithmetic(from_x, x, given=f"{given}: {label}")
            expect_float64_arithmetic(
                from_grad_out, grad_out, given=f"{given}: {label}", nudged="grad_out"
            )
        # Then the values, against autograd through the built-in in float64: a float32 rounding
        # of one reduction or one statistic still lets every element answer the nudges above,
        # but leaves an error of about 1e-8, where float64 in any order of operations stays
        # below 1e-13. What is off and also moves in steps as x (or grad_out) moves is rounded;
        # what is off but smooth is a wrong value, which the interview core's checks judge.
        y, grads = self.run(kata, x, w, b, 1e-5, grad_out, given=given)
        want_y, want = self.reference(x, w, b, 1e-5, grad_out)
        self._float64_close(y, want_y, (forward,), x, what="forward's output", given=given)
        for i, (name, got) in enumerate(self.named(grads).items()):
            label = "grad_x" if name == "input" else f"grad_{name}"
            got = expect_tensor(got, f"backward's {label}")

            def of_x(v: torch.Tensor, i: int = i) -> Any:
                return self.run(kata, v, w, b, 1e-5, grad_out, given=given)[1][i]

            def of_grad_out(g: torch.Tensor, i: int = i) -> Any:
                return self.run(kata, x, w, b, 1e-5, g, given=given)[1][i]

            self._float64_close(
                got, want[name], (of_x, of_grad_out), x, grad_out, what=f"backward's {label}",
                given=given,
            )  # fmt: skip

    def noncontiguous_input(
        self, kata: Any, device: torch.device, shape: tuple, dims: tuple[int, ...], how: str
    ) -> None:
        """x made in the order `dims` (a permutation that is its own inverse), then permuted
        back to its shape, as an activation after a transpose is: forward and every gradient.
        grad_out is contiguous, so that only x's layout differs."""
        made = torch.randn([shape[d] for d in dims], dtype=torch.float64, device=device)
        x = (made * 2.0 + 1.0).permute(dims)
        _, w, b = self.inputs(*shape, device=device)
        grad_out = torch.randn(shape, dtype=x.dtype, device=device)
        given = f"{self.describe(x)} with a {how} (non-contiguous) x"
        y, grads = self.run_on_layout(kata, x, w, b, grad_out, given=given)
        want_y, want = self.reference(x, w, b, 1e-5, grad_out)
        expect_close(y, want_y, given=given)
        expect_grads_close(self.named(grads), want, given=given, backward=True)

    def noncontiguous_grad_out(
        self, kata: Any, device: torch.device, shape: tuple, dims: tuple[int, ...], how: str
    ) -> None:
        """grad_out made in the order `dims` (a permutation that is its own inverse), then
        permuted back to x's shape: `how` says how ("transposed", "permuted")."""
        x, w, b = self.inputs(*shape, device=device)
        made = torch.randn([x.shape[d] for d in dims], dtype=x.dtype, device=device)
        grad_out = made.permute(dims)
        given = f"{self.describe(x)} with a {how} (non-contiguous) grad_out"
        _, grads = self.run_on_layout(kata, x, w, b, grad_out, given=given)
        _, want = self.reference(x, w, b, 1e-5, grad_out)
        expect_grads_close(self.named(grads), want, given=given, backward=True)

    def half_precision(
        self, kata: Any, device: torch.device, dtype: torch.dtype, shape: tuple
    ) -> None:
        """x, then grad_out, far from zero (HALF_OFFSET + randn), with the initial weight and
        bias: the affine step is exact in any precision, so only the statistics and the
        gradient's arithmetic show. Compared with the formula in float64 rounded once."""
        offset = HALF_OFFSET[dtype]
        features = shape[self.feature_dim]
        # One input far from zero at a time: both at once would make the gradient sensitive to
        # float32's own rounding of the mean, which no float32 implementation avoids.
        for x_shift, g_shift, far in ((offset, 0.0, "x"), (0.0, offset, "grad_out")):
            x = (x_shift + torch.randn(shape, device=device)).to(dtype)
            grad_out = (g_shift + torch.randn(shape, device=device)).to(dtype)
            w = torch.ones(features, dtype=dtype, device=device)
            b = torch.zeros(features, dtype=dtype, device=device)
            given = f"{self.describe(x)} with {far} = {offset:g} + randn"
            y, grads = self.run(kata, x, w, b, 1e-5, grad_out, given=given)
            want_y, want = self.reference(
                x.double(), w.double(), b.double(), 1e-5, grad_out.double()
            )
            expect_rounded_once(y, self.named(grads), want_y, want, dtype=dtype, given=given)

    def float32_parameters_with_half_input(
        self, kata: Any, device: torch.device, dtype: torch.dtype, shape: tuple
    ) -> None:
        """x and grad_out in a half dtype beside a float32 weight (and bias), as mixed-precision
        training keeps its parameters: y and grad_x in x's dtype, within 2 ulps of the formula
        in float64 rounded once; each parameter's gradient in float32, its dtype, at float32's
        tolerance (as autograd through the built-in gives them)."""
        x = torch.randn(shape, device=device).to(dtype)
        grad_out = torch.randn(shape, device=device).to(dtype)
        _, w, b = self.inputs(*shape, dtype=torch.float32, device=device)
        params = " and bias" if self.bias else ""
        given = f"{self.describe(x)} with a float32 weight{params}"
        y, grads = self.run(kata, x, w, b, 1e-5, grad_out, given=given)
        want_y, want = self.reference(x.double(), w.double(), b.double(), 1e-5, grad_out.double())
        tol = 2 * torch.finfo(dtype).eps
        expect_close(y, want_y.to(dtype), given=given, rtol=tol, atol=tol)
        named = self.named(grads)
        expect_close(
            named["input"], want["input"].to(dtype), given=given, what="gradient of input",
            rtol=tol, atol=tol,
        )  # fmt: skip
        for name in self.grad_names[1:]:
            got = expect_tensor(named[name], f"backward's grad_{name}")
            expect_close(got, want[name].float(), given=given, what=f"gradient of {name}")

    def _float64_close(
        self, got: torch.Tensor, want: torch.Tensor,
        moves: tuple[Callable[[torch.Tensor], Any], ...], *at: torch.Tensor, what: str,
        given: str,
    ) -> None:  # fmt: skip
        """got, a float64 result, within FLOAT64_RTOL of autograd's through the built-in
        (relative to its largest element), unless it is smooth: each of `moves` recomputes it
        from one input (`at`, in order: x, then grad_out), and a result that is off but whose
        slopes are those of float64 arithmetic is a wrong value, not a rounding."""
        if got.shape != want.shape:  # the interview core's checks judge shapes
            return
        g, e = got.detach().double().cpu(), want.detach().double().cpu()
        error = ((g - e).abs().max() / e.abs().max().clamp_min(1e-300)).item()
        if error <= FLOAT64_RTOL:
            return
        for run, v, nudged in zip(moves, at, ("x", "grad_out"), strict=False):
            noise = finite_difference_noise(run, v)
            if noise > FINITE_DIFFERENCE_NOISE:
                fail(
                    f"{given}: {what} differs from autograd's through {self.builtin_name} in "
                    f"float64 by {error:.2g} of its largest element, and moves in steps as "
                    f"{nudged} moves: its slopes over steps of 1e-6 and 2e-6 differ by "
                    f"{noise:.2g} of the largest. float64 arithmetic lands within "
                    f"{FLOAT64_RTOL:g} of autograd's and moves smoothly; rounding to float32 "
                    "anywhere (a .float() on one reduction, a saved statistic) does this."
                )
