"""update takes an empty batch's mean, 0 / 0 = NaN, and merges it with a weight of 0:
NaN · 0 is NaN.
"""

import torch

EXPECT = "test_empty_batch"
ALSO = "test_matches_var_mean"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = 0
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros(num_features, device=device, dtype=dtype)

    def update(self, x):
        n = x.shape[0]
        x = x.to(self.mean.dtype)
        mean = x.mean(0)
        m2 = (x - mean).square().sum(0)
        n_a, total = self.count, self.count + n
        delta = mean - self.mean
        self.mean = self.mean + delta * (n / max(total, 1))
        self.m2 = self.m2 + m2 + delta.square() * (n_a * n / max(total, 1))
        self.count = total

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
