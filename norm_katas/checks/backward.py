"""The backward katas' checks, one template: a custom torch.autograd.Function (forward and a
backward derived by hand) compared with autograd through torch's built-in.

LayerNorm-backward and BatchNorm-backward differ only in which dims the statistics run over and
which the weight runs along, RMSNorm-backward also in having no bias; a suite declares that
once, as a FunctionKata, and each of its check functions (name, docstring and marks stay in the
suite: they are what the learner reads) calls the method of the same name with the shapes it
checks on.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from norm_katas.checks.autograd import (
    FINITE_DIFFERENCE_NOISE,
    call_backward,
    call_forward,
    expect_backward_by_hand,
    expect_backward_shapes,
    expect_gradcheck,
    expect_saves_only_what_backward_needs,
    expect_through_function,
    finite_difference_noise,
    learner_line,
)
from norm_katas.checks.comparisons import (
    HALF_OFFSET,
    expect_close,
    expect_grads_close,
    expect_rounded_once,
    expect_tensor,
    shape_of,
)
from norm_katas.checks.execution import (
    expect_float64_arithmetic,
    expect_from_scratch,
    expect_function_follows_device,
    expect_vectorized,
)
from norm_katas.checks.suite import PerfCase
from norm_katas.runtime.outcomes import fail

Grads = tuple[Any, ...]  # what backward returned for x, weight and (where there is one) bias
Builtin = Callable[[torch.Tensor, torch.Tensor | None, torch.Tensor | None, float], torch.Tensor]


@dataclass(frozen=True)
class FunctionKata:
    """What one backward kata is: the rest of its checks is shared."""

    function: str  # the Function class the learner writes: "LayerNormFunction"
    wrapper: str  # the function that applies it, (x, weight, bias, eps=1e-5): "layer_norm"
    builtin: Builtin  # torch's forward, builtin(x, weight, bias, eps), in training mode
    builtin_name: str  # how messages name it: "F.layer_norm"
    feature_dim: int  # the dim weight and bias run along: -1 (a row's features), 1 (channels)
    per_feature: bool  # statistics per feature (BatchNorm: over every other dim), else per row
    constant: str  # how a gradient constant where the statistics are is said: "along each row"
    forbidden: frozenset[str]  # the built-ins forward and backward must not call
    bias: bool = True  # the Function takes (x, weight, bias, eps); without, (x, weight, eps)
    weight_optional: bool = False  # the weight may be None (RMSNorm without elementwise_affine)

    # -- the pieces every check uses ---------------------------------------------------------

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

    def tensors(self, x: Any, w: Any, b: Any) -> tuple[Any, ...]:
        """The Function's tensor inputs, in order: (x, w, b), or (x, w) without a bias."""
        return (x, w, b) if self.bias else (x, w)

    @property
    def tensor_names(self) -> tuple[str, ...]:
        """How messages name the Function's tensor inputs: ("x", "weight"[, "bias"])."""
        return ("x", "weight", "bias") if self.bias else ("x", "weight")

    @property
    def grad_names(self) -> tuple[str, ...]:
        """The names backward's gradients are compared by, in order."""
        return ("input", "weight", "bias") if self.bias else ("input", "weight")

    def named(self, grads: Grads) -> dict[str, Any]:
        return dict(zip(self.grad_names, grads, strict=True))

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

    def describe(self, x: torch.Tensor, eps: float = 1e-5) -> str:
        return f"{self.function} on x {shape_of(x)} (eps={eps:g})"

    def along_features(self, t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """t, one value per feature, viewed to broadcast along x's feature dim."""
        shape = [1] * x.dim()
        shape[self.feature_dim] = -1
        return t.view(shape)

    def statistic_dims(self, x: torch.Tensor) -> list[int]:
        """The dims each mean and variance runs over."""
        features = self.feature_dim % x.dim()
        if self.per_feature:
            return [d for d in range(x.dim()) if d != features]
        return [features]

    # -- the checks, one method each: `shape` is the input's ---------------------------------

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

    def unbatched(self, kata: Any, device: torch.device, shape: tuple) -> None:
        """Forward and every gradient on an input with no batch dims, as autograd gives them."""
        x, w, b = self.inputs(*shape, device=device)
        grad_out = torch.randn_like(x)
        given = self.describe(x)
        y, grads = self.run(kata, x, w, b, 1e-5, grad_out, given=given)
        want_y, want = self.reference(x, w, b, 1e-5, grad_out)
        expect_close(y, want_y, given=given)
        expect_grads_close(self.named(grads), want, given=given)

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

    def gradient_of(self, kata: Any, device: torch.device, name: str, shape: tuple) -> None:
        """The gradient of one input ("input", "weight" or "bias") alone."""
        x, w, b = self.inputs(*shape, device=device)
        grad_out = torch.randn_like(x)
        given = self.describe(x)
        _, grads = self.run(kata, x, w, b, 1e-5, grad_out, given=given)
        _, want = self.reference(x, w, b, 1e-5, grad_out)
        expect_grads_close({name: self.named(grads)[name]}, {name: want[name]}, given=given)

    def zero_weight_elements(self, kata: Any, device: torch.device, shape: tuple) -> None:
        """A weight with some elements exactly 0 (legal: torchvision's zero_init_residual starts
        each residual block's last norm at a zero weight): forward and every gradient, as
        autograd gives them."""
        x, w, b = self.inputs(*shape, device=device)
        w[::3] = 0.0
        grad_out = torch.randn_like(x)
        zeros = ", ".join(str(i) for i in range(0, w.numel(), 3))
        given = f"{self.describe(x)} with the weight's elements {zeros} at 0"
        y, grads = self.run(kata, x, w, b, 1e-5, grad_out, given=given)
        want_y, want = self.reference(x, w, b, 1e-5, grad_out)
        expect_close(y, want_y, given=given)
        expect_grads_close(self.named(grads), want, given=given)

    def grad_x_through_the_weight(
        self, kata: Any, device: torch.device, shape: tuple, eps: float = 1e-5
    ) -> None:
        """grad_out · weight with neither a mean nor a component along x̂ over any statistic's
        elements: both correction terms vanish, and grad_x is that gradient times rstd. A
        backward that leaves the weight out of the gradient reaching x̂ shows here, and not as
        a wrong mean or variance term."""
        x, w, b = self.inputs(*shape, device=device)
        dims = self.statistic_dims(x)
        x_hat = self.builtin(x, None, None, eps)
        v = torch.randn_like(x)
        v = v - v.mean(dims, keepdim=True)
        v = v - x_hat * (v * x_hat).mean(dims, keepdim=True) / x_hat.square().mean(
            dims, keepdim=True
        )
        grad_out = v / self.along_features(w, x)
        said = f"with grad_out · weight of mean 0 and orthogonal to x̂ {self.constant}"
        self._grad_x(kata, x, w, b, eps, grad_out, given=f"{self.describe(x, eps)} {said}")

    def grad_x_through_the_mean(self, kata: Any, device: torch.device, shape: tuple) -> None:
        """grad_out · weight constant wherever one mean is taken: grad_x is zero."""
        x, w, b = self.inputs(*shape, device=device)
        constant = [1 if d in self.statistic_dims(x) else n for d, n in enumerate(x.shape)]
        per_mean = torch.randn(constant, dtype=x.dtype, device=device)
        grad_out = (per_mean / self.along_features(w, x)).expand_as(x).clone()
        given = f"{self.describe(x)} with grad_out · weight constant {self.constant}"
        self._grad_x(kata, x, w, b, 1e-5, grad_out, given=given)

    def grad_x_through_the_variance(self, kata: Any, device: torch.device, shape: tuple) -> None:
        """grad_out · weight equal to x̂ times a factor per statistic: grad_x is (almost) zero.
        A factor of its own for each (not one for all), so that a projection averaged over
        every element instead of within each statistic's elements shows."""
        x, w, b = self.inputs(*shape, device=device)
        x_hat = self.builtin(x, None, None, 1e-5)
        constant = [1 if d in self.statistic_dims(x) else n for d, n in enumerate(x.shape)]
        factor = torch.randn(constant, dtype=x.dtype, device=device) + 2
        grad_out = x_hat * factor / self.along_features(w, x)
        said = f"with grad_out · weight equal to x̂ times a factor constant {self.constant}"
        given = f"{self.describe(x)} {said}"
        self._grad_x(kata, x, w, b, 1e-5, grad_out, given=given)

    def backward_eps_inside_sqrt(self, kata: Any, device: torch.device, *shapes: tuple) -> None:
        for shape in shapes:
            x, w, b = self.inputs(*shape, device=device, spread=0.1)
            grad_out = torch.randn_like(x)
            given = f"{self.describe(x, 0.05)} on small inputs"
            self._grad_x(kata, x, w, b, 0.05, grad_out, given=given)

    def follows_device(self, kata: Any, device: torch.device, shape: tuple) -> None:
        x, w, b = self.inputs(*shape, dtype=torch.float32)

        def both(x, w, b, grad_out):  # type: ignore[no-untyped-def]
            return self.run(kata, x, w, b, 1e-5, grad_out, given=self.describe(x))

        expect_function_follows_device(
            both, x, w, b, torch.randn_like(x), device=device, given=self.describe(x)
        )

    def gradcheck(self, kata: Any, device: torch.device, *shapes: tuple) -> None:
        def fn(*tensors: torch.Tensor) -> Any:
            return getattr(kata, self.wrapper)(*tensors, 1e-5)

        for shape in shapes:
            inputs = self.tensors(*self.inputs(*shape, device=device))
            inputs = tuple(t.requires_grad_() for t in inputs)
            given = f"torch.autograd.gradcheck({self.wrapper}, ...) on x {shape_of(inputs[0])}"
            expect_gradcheck(fn, inputs, given=given)

    def gradients_match_autograd(
        self, kata: Any, device: torch.device, shapes: tuple[tuple, ...]
    ) -> None:
        for dtype in (torch.float32, torch.float64):
            for shape in shapes:
                x, w, b = self.inputs(*shape, dtype=dtype, device=device)
                grad_out = torch.randn_like(x)
                self._all_grads(kata, x, w, b, grad_out, given=self.describe(x))

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

            def from_x(v: torch.Tensor, i: int = i) -> Any:
                return self.run(kata, v, w, b, 1e-5, grad_out, given=self.describe(v))[1][i]

            def from_grad_out(g: torch.Tensor, i: int = i) -> Any:
                return self.run(kata, x, w, b, 1e-5, g, given=given)[1][i]

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
        y, grads = self._run_on_layout(kata, x, w, b, grad_out, given=given)
        want_y, want = self.reference(x, w, b, 1e-5, grad_out)
        expect_close(y, want_y, given=given)
        expect_grads_close(self.named(grads), want, given=given)

    def noncontiguous_grad_out(
        self, kata: Any, device: torch.device, shape: tuple, dims: tuple[int, ...], how: str
    ) -> None:
        """grad_out made in the order `dims` (a permutation that is its own inverse), then
        permuted back to x's shape: `how` says how ("transposed", "permuted")."""
        x, w, b = self.inputs(*shape, device=device)
        made = torch.randn([x.shape[d] for d in dims], dtype=x.dtype, device=device)
        grad_out = made.permute(dims)
        given = f"{self.describe(x)} with a {how} (non-contiguous) grad_out"
        _, grads = self._run_on_layout(kata, x, w, b, grad_out, given=given)
        _, want = self.reference(x, w, b, 1e-5, grad_out)
        expect_grads_close(self.named(grads), want, given=given)

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

    def _run_on_layout(
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

    def _grad_x(
        self, kata: Any, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float,
        grad_out: torch.Tensor, *, given: str,
    ) -> None:  # fmt: skip
        _, (grad_x, *_) = self.run(kata, x, w, b, eps, grad_out, given=given)
        _, want = self.reference(x, w, b, eps, grad_out)
        expect_grads_close({"input": grad_x}, {"input": want["input"]}, given=given)

    def _all_grads(
        self, kata: Any, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor,
        grad_out: torch.Tensor, *, given: str,
    ) -> None:  # fmt: skip
        _, grads = self.run(kata, x, w, b, 1e-5, grad_out, given=given)
        _, want = self.reference(x, w, b, 1e-5, grad_out)
        expect_grads_close(self.named(grads), want, given=given)

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


# float64 results against the built-in's, relative to the largest element: any order of float64
# operations stays below 1e-13 on the checks' inputs, float32 rounding anywhere leaves ~1e-8.
FLOAT64_RTOL = 1e-10


def _copy(t: Any) -> Any:
    """A copy of a tensor in the same layout (strides kept: a transposed tensor stays one);
    anything else as it is."""
    return t.clone() if isinstance(t, torch.Tensor) else t
