"""What one backward kata is: the names of its Function and wrapper, the built-in it is
compared with, and the dims its statistics and parameters run along. The rest is shared."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from norm_katas.checks.comparisons import shape_of

Grads = tuple[Any, ...]  # what backward returned for x, weight and (where there is one) bias
Builtin = Callable[[torch.Tensor, torch.Tensor | None, torch.Tensor | None, float], torch.Tensor]


@dataclass(frozen=True)
class Description:
    """A backward kata, declared once by its suite: the checks read only this."""

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

    def per_statistic(self, x: torch.Tensor) -> list[int]:
        """The shape of one value per statistic, to broadcast along x: 1 where a mean runs."""
        return [1 if d in self.statistic_dims(x) else n for d, n in enumerate(x.shape)]
