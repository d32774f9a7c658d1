"""A sum state, with mean as a functools.cached_property: computed on its first read, never again.

Right whenever mean is first read at the end, stale once it has been read between batches.
"""

import functools

import torch

EXPECT = "test_statistics_follow_every_step"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = 0
        self.total = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros(num_features, device=device, dtype=dtype)

    @functools.cached_property
    def mean(self):
        return self.total / self.count if self.count else torch.zeros_like(self.total)

    def update(self, x):
        n = x.shape[0]
        if n == 0:
            return
        x = x.to(self.total.dtype)
        total = x.sum(0)
        self._add(n, total, (x - total / n).square().sum(0))

    def merge(self, other):
        self._add(other.count, other.total, other.m2)

    def _add(self, n_b, total_b, m2_b):
        if n_b == 0:
            return
        n_a = self.count
        if n_a:
            delta = total_b / n_b - self.total / n_a
            m2_b = m2_b + delta.square() * (n_a * n_b / (n_a + n_b))
        self.m2 = self.m2 + m2_b
        self.total = self.total + total_b
        self.count = n_a + n_b

    def var(self, correction=1):
        return self.m2 / max(0, self.count - correction)
