"""The checks of grad_x term by term: special gradients that isolate each path from x̂ back
to x. grad_out · weight with no mean and no part along x̂ shows the weight alone; one constant
wherever a mean runs reaches x only through the mean, one proportional to x̂ only through the
variance (or RMSNorm's root mean square), and each must give zero there."""

from __future__ import annotations

import math
from typing import Any

import torch

from norm_katas.checks.backward.harness import Harness
from norm_katas.checks.comparisons import expect_grads_close, values_close
from norm_katas.runtime.outcomes import fail_for


class TermChecks(Harness):
    """The checks of dL/dx's terms, one method each."""

    def grad_x_through_the_weight(
        self, kata: Any, device: torch.device, shape: tuple, eps: float = 1e-5
    ) -> None:
        """grad_out · weight with neither a mean nor a component along x̂ over any statistic's
        elements: both correction terms vanish, and grad_x is that gradient times rstd. A
        backward that leaves the weight out of the gradient reaching x̂ shows here, and not as
        a wrong mean or variance term; nor over the other dims' elements, so that neither does
        a mean or variance term taken over the wrong dims (theirs to name)."""
        x, w, b = self.inputs(*shape, device=device)
        dims = self.statistic_dims(x)
        others = [d for d in range(x.dim()) if d not in dims]
        x_hat = self.builtin(x, None, None, eps)
        v = _orthogonal(torch.randn_like(x), x_hat, [dims, others])
        grad_out = v / self.along_features(w, x)
        said = f"with grad_out · weight of mean 0 and orthogonal to x̂ {self.constant}"
        given = f"{self.describe(x, eps)} {said}"
        _, (grad_x, *_) = self.run(kata, x, w, b, eps, grad_out, given=given)
        # grad_out · weight itself: the weight is there, the factor rstd that x̂ carries is not,
        # the scale that test_backward_eps_inside_sqrt judges.
        _, want = self.reference(x, w, b, eps, grad_out)
        if (
            isinstance(grad_x, torch.Tensor)
            and grad_x.shape == v.shape
            and values_close(grad_x, v)
            and not values_close(want["input"], v)
        ):
            fail_for(
                "test_backward_eps_inside_sqrt",
                f"{given}: grad_x is grad_out · weight itself, where it is that times the "
                "1/√(… + ε) that forward divides by: x̂ carries that factor, and so does every "
                "gradient through it.",
            )
        expect_grads_close({"input": grad_x}, {"input": want["input"]}, given=given, backward=True)

    def grad_x_through_the_mean(self, kata: Any, device: torch.device, shape: tuple) -> None:
        """grad_out · weight constant wherever one mean is taken: grad_x is zero."""
        x, w, b = self.inputs(*shape, device=device)
        per_mean = torch.randn(self.per_statistic(x), dtype=x.dtype, device=device)
        grad_out = (per_mean / self.along_features(w, x)).expand_as(x).clone()
        given = f"{self.describe(x)} with grad_out · weight constant {self.constant}"
        self.expect_grad_x(kata, x, w, b, 1e-5, grad_out, given=given)

    def grad_x_through_the_variance(self, kata: Any, device: torch.device, shape: tuple) -> None:
        """grad_out · weight equal to x̂ times a factor per statistic: grad_x is (almost) zero.
        A factor of its own for each (not one for all), so that a projection averaged over
        every element instead of within each statistic's elements shows."""
        x, w, b = self.inputs(*shape, device=device)
        factor = torch.randn(self.per_statistic(x), dtype=x.dtype, device=device) + 2
        # A tiny eps: with 1e-5 autograd's grad_x here is about 1e-5, not zero, and a backward
        # that leaves eps out of its scale (test_backward_eps_inside_sqrt's mistake) gave zero.
        self.grad_x_along_x_hat(kata, x, w, b, factor, eps=1e-10)

    def grad_x_along_x_hat(
        self, kata: Any, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor,
        factor: torch.Tensor, eps: float = 1e-5,
    ) -> None:  # fmt: skip
        """grad_x is (almost) zero for grad_out · weight equal to x̂ times `factor`, one value per
        statistic (shaped per_statistic(x)): the path through the variance alone, whose
        projection term must remove it all."""
        x_hat = self.builtin(x, None, None, eps)
        grad_out = x_hat * factor / self.along_features(w, x)
        said = f"with grad_out · weight equal to x̂ times a factor constant {self.constant}"
        self.expect_grad_x(kata, x, w, b, eps, grad_out, given=f"{self.describe(x, eps)} {said}")


def _orthogonal(v: torch.Tensor, x_hat: torch.Tensor, partitions: list[list[int]]) -> torch.Tensor:
    """v projected (least squares, in float64) onto the tensors whose sum and whose dot product
    with x̂ are 0 over each group of elements that a reduction over `dims` sums, for each dims
    of `partitions` (an empty dims: no constraint)."""
    rows = []
    for dims in (d for d in partitions if d):
        kept = [1 if i in dims else n for i, n in enumerate(x_hat.shape)]
        group = torch.arange(math.prod(kept)).view(kept).expand(x_hat.shape)
        one_hot = torch.nn.functional.one_hot(group.reshape(-1)).T.double()
        rows += [one_hot, one_hot * x_hat.reshape(-1).double().cpu()]
    a = torch.cat(rows)
    flat = v.reshape(-1).double().cpu()
    flat = flat - a.T @ (torch.linalg.pinv(a @ a.T) @ (a @ flat))
    return flat.reshape(v.shape).to(v)
