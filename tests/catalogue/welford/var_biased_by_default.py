"""var() defaults to the biased variance (correction=0), where torch.var's default is 1."""

import torch

EXPECT = "test_correction"
ALSO = (
    "test_one_batch, "
    "test_stream_of_batches, "
    "test_batch_of_one, "
    "test_empty_batch, "
    "test_merge_spread_of_means, "
    "test_merge_weights_by_counts, "
    "test_merge_with_empty, "
    "test_merge_leaves_other_unmodified, "
    "test_merge_takes_a_snapshot, "
    "test_statistics_follow_every_step, "
    "test_one_sample_unbiased, "
    "test_computes_in_float64, "
    "test_keeps_its_dtype, "
    "test_matches_var_mean"
)


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

    def var(self, correction=0):
        return self.m2 / max(0, self.count - correction)
