"""The textbook shortcut: Σx and Σx² kept, var = (Σx² − (Σx)² / n) / (n − c).

Exact in arithmetic and fine near zero; in float32 around a mean of 1e4 the two terms are
near 1e8 and their difference, the variance, is lost to rounding.
"""

import torch

EXPECT = "test_large_mean_float32"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = 0
        self.total = torch.zeros(num_features, device=device, dtype=dtype)
        self.squares = torch.zeros(num_features, device=device, dtype=dtype)

    @property
    def mean(self):
        return self.total / max(self.count, 1)

    def update(self, x):
        x = x.to(self.total.dtype)
        self.count += x.shape[0]
        self.total = self.total + x.sum(0)
        self.squares = self.squares + x.square().sum(0)

    def merge(self, other):
        self.count += other.count
        self.total = self.total + other.total
        self.squares = self.squares + other.squares

    def var(self, correction=1):
        m2 = self.squares - self.total.square() / max(self.count, 1)
        return m2 / max(0, self.count - correction)
