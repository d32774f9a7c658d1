"""Mistake: var() divides the stored M2 in place (m2.div_) and returns it. The first read is
right; each later read divides again, and updates build on the shrunken M2."""

from solutions.welford import Welford as Reference

EXPECT = "test_reading_changes_nothing"
ALSO = (
    "test_correction, "
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
    "test_large_mean_float32, "
    "test_computes_in_float64, "
    "test_keeps_its_dtype, "
    "test_matches_var_mean"
)


class Welford(Reference):
    def var(self, correction=1):
        return self.m2.div_(max(0, self.count - correction))
