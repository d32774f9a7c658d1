"""update centres the batch in place: x.to(dtype) is x itself when the dtype already matches,
so x -= mean overwrites the caller's tensor.
"""

import torch

EXPECT = "test_update_leaves_its_input"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = 0
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros(num_features, device=device, dtype=dtype)

    def update(self, x):
        n = x.shape[0]
        if n == 0:
            return
        x = x.to(self.mean.dtype)
        mean = x.sum(0) / n
        x -= mean
        self._combine(n, mean, x.square().sum(0))

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
