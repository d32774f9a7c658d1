"""Welford's per-row M2 += δ · (x − new mean), summed over a batch against the old mean.

Σ (x − old)(x − new) is exact in arithmetic, but with the old mean far from the batch (0 at
the start) it is a large number times a sum that should cancel: float32 loses the variance.
"""

import torch

EXPECT = "test_large_mean_float32"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = 0
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros(num_features, device=device, dtype=dtype)

    def update(self, x):
        n_b = x.shape[0]
        if n_b == 0:
            return
        x = x.to(self.mean.dtype)
        n = self.count + n_b
        old = self.mean
        self.mean = old + (x - old).sum(0) / n
        self.m2 = self.m2 + ((x - old) * (x - self.mean)).sum(0)
        self.count = n

    def merge(self, other):
        self._combine(other.count, other.mean, other.m2)

    def _combine(self, n_b, mean_b, m2_b):
        if n_b == 0:
            return
        n_a, n = self.count, self.count + n_b
        delta = mean_b - self.mean
        self.mean = self.mean + delta * (n_b / n)
        self.m2 = self.m2 + m2_b + delta.square() * (n_a * n_b / n)
        self.count = n

    def var(self, correction=1):
        return self.m2 / max(0, self.count - correction)
