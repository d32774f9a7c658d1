"""count kept as a float32 tensor:
it stops counting at 2**24 rows, and n_b / n rounds to float32.
"""

import torch

EXPECT = "test_starts_empty"
ALSO = "test_computes_in_float64"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = torch.zeros((), device=device)
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros(num_features, device=device, dtype=dtype)

    def update(self, x):
        n = x.shape[0]
        if n == 0:
            return
        x = x.to(self.mean.dtype)
        mean = x.sum(0) / n
        self._combine(n, mean, (x - mean).square().sum(0))

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
        return self.m2 / (self.count - correction).clamp(min=0)
