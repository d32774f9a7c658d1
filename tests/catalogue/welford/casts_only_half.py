"""update casts only half batches (to float32); float32 and float64 batches are used as they come.

A float32 batch into a float64 state gets its mean and M2 in float32, promoted only after.
"""

import torch

EXPECT = "test_computes_in_float64"
ALSO = "test_keeps_its_dtype"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = 0
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros(num_features, device=device, dtype=dtype)

    def update(self, x):
        n = x.shape[0]
        if n == 0:
            return
        if x.dtype in (torch.float16, torch.bfloat16):
            x = x.float()
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
        return self.m2 / max(0, self.count - correction)
