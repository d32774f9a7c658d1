"""update takes a half batch's mean in the batch's own dtype, to spare a float32 copy of the
batch (float32 and float64 batches are cast first): float16 rounds it to steps of 0.25 near 384.
"""

import torch

EXPECT = "test_half_batches"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = 0
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros(num_features, device=device, dtype=dtype)

    def update(self, x):
        n = x.shape[0]
        if n == 0:
            return
        if x.element_size() < 4:  # half data: its statistics are cast, not the whole batch
            mean = x.mean(0).to(self.mean.dtype)
            m2 = (x.to(self.mean.dtype) - mean).square().sum(0)
        else:
            x = x.to(self.mean.dtype)
            mean = x.sum(0) / n
            m2 = (x - mean).square().sum(0)
        self._combine(n, mean, m2)

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
