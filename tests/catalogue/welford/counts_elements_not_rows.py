"""Mistake: count grows by x.numel() (rows · features) instead of x.shape[0], the number of rows."""

import torch

EXPECT = "test_one_batch"
ALSO = "test_stream_of_batches, test_batch_of_one, test_one_sample_unbiased, test_matches_var_mean"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = 0
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self._m2 = torch.zeros(num_features, device=device, dtype=dtype)

    def _merge(self, n_b, mean_b, m2_b):
        if n_b == 0:
            return
        n_a = self.count
        n = n_a + n_b
        delta = mean_b - self.mean
        self.mean = self.mean + delta * n_b / n
        self._m2 = self._m2 + m2_b + delta * delta * n_a * n_b / n
        self.count = n

    def update(self, x):
        b = x.shape[0]
        if b == 0:
            return
        var_b, mean_b = torch.var_mean(x.to(self.mean.dtype), dim=0, correction=0)
        self._merge(x.numel(), mean_b, var_b * b)

    def merge(self, other):
        self._merge(other.count, other.mean, other._m2)

    def var(self, correction=1):
        return self._m2 / max(0, self.count - correction)
