"""Welford row by row, with δ taken after the mean moved: M2 += (x − new mean)².

The classic slip: the product needs the deviation from the old mean times that from the
new one; the square of the new one underestimates the variance.
"""

import torch

EXPECT = "test_one_batch"
ALSO = "test_matches_var_mean"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = 0
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros(num_features, device=device, dtype=dtype)

    def update(self, x):
        x = x.to(self.mean.dtype)
        for row in x:
            self.count += 1
            self.mean = self.mean + (row - self.mean) / self.count
            delta = row - self.mean
            self.m2 = self.m2 + delta * delta

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
