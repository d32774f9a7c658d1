"""Each batch's M2 from torch.var's default, the unbiased variance: x.var(0) · (B − 1).

Right for B > 1, but a batch of one row has an unbiased variance of NaN, and NaN · 0 is NaN.
"""

import torch

EXPECT = "test_batch_of_one"
ALSO = "test_one_sample_unbiased, test_matches_var_mean"


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
        self._combine(n, x.mean(0), x.var(0) * (n - 1))

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
