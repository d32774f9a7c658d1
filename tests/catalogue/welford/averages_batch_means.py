"""update averages the batch means with equal weights: a running mean over batches, not rows."""

import torch

EXPECT = "test_stream_of_batches"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = 0
        self.batches = 0
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros(num_features, device=device, dtype=dtype)

    def update(self, x):
        n = x.shape[0]
        if n == 0:
            return
        x = x.to(self.mean.dtype)
        mean = x.sum(0) / n
        m2 = (x - mean).square().sum(0)
        n_a, total = self.count, self.count + n
        delta = mean - self.mean
        self.m2 = self.m2 + m2 + delta.square() * (n_a * n / total)
        self.batches += 1
        self.mean = self.mean + delta / self.batches
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
