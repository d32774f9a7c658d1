"""Welford's original, one row at a time, each step vectorized over the features; the count is
an int64 tensor on the state's device, and merge branches on no tensor value.
"""

import torch

EXPECT = "pass"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = torch.zeros((), dtype=torch.long, device=device)
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros(num_features, device=device, dtype=dtype)

    def update(self, x):
        for row in x.to(self.mean.dtype):
            self.count = self.count + 1
            delta = row - self.mean
            self.mean = self.mean + delta / self.count
            self.m2 = self.m2 + delta * (row - self.mean)

    def merge(self, other):
        n_a = self.count.to(self.mean.dtype)
        n_b = torch.as_tensor(other.count, device=self.mean.device).to(self.mean.dtype)
        n = (n_a + n_b).clamp(min=1)  # two empty sides: weights of 0, not 0 / 0
        delta = other.mean - self.mean
        self.mean = self.mean + delta * n_b / n
        self.m2 = self.m2 + other.m2 + delta * delta * n_a * n_b / n
        self.count = self.count + other.count

    def var(self, correction=1):
        return self.m2 / (self.count - correction).clamp(min=0).to(self.m2.dtype)
