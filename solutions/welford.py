"""Reference solution: Welford's running mean and variance, with Chan's merge."""

from __future__ import annotations

import torch


class Welford:
    """Per-feature count, mean and M2 (sum of squared deviations) of the rows seen so far."""

    def __init__(
        self,
        num_features: int,
        *,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        self.count = 0  # a host int: known from x.shape, exact, and no device sync to read
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros(num_features, device=device, dtype=dtype)

    def update(self, x: torch.Tensor) -> None:
        """Add a batch of rows (B, num_features), B >= 0: its own two-pass statistics, merged."""
        n = x.shape[0]
        if n == 0:  # nothing to add, and its mean would be 0 / 0
            return
        x = x.to(self.mean.dtype)  # half data accumulates in the state's dtype
        mean = x.sum(0) / n
        # Centred on the batch's own mean: no E[x²] − E[x]² cancellation.
        m2 = (x - mean).square().sum(0)
        self._combine(n, mean, m2)

    def merge(self, other: Welford) -> None:
        """Add the rows another accumulator has seen; other is left as it was."""
        self._combine(other.count, other.mean, other.m2)

    def _combine(self, n_b: int, mean_b: torch.Tensor, m2_b: torch.Tensor) -> None:
        """Chan et al.: merge (n_b, mean_b, m2_b) into this state."""
        if n_b == 0:
            return
        n_a, n = self.count, self.count + n_b
        delta = mean_b - self.mean
        # Weighted by counts, not by batches; new tensors, so other's are never written.
        self.mean = self.mean + delta * (n_b / n)
        # The spread within each part plus that of their means around the merged mean.
        self.m2 = self.m2 + m2_b + delta.square() * (n_a * n_b / n)
        self.count = n

    def var(self, correction: float = 1) -> torch.Tensor:
        """The variance as torch.var computes it: M2 / max(0, count − correction)."""
        return self.m2 / max(0, self.count - correction)
