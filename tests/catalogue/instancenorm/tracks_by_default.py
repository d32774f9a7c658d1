"""Mistake: track_running_stats=True by default, as BatchNorm's."""

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_no_running_stats_by_default"
ALSO = (
    "test_state_dict_round_trip, "
    "test_output_like_input, "
    "test_affine_per_channel, "
    "test_eval_without_running_stats, "
    "test_unbatched_input, "
    "test_input_unmodified, "
    "test_from_scratch, "
    "test_follows_device, "
    "test_forward_matches_torch, "
    "test_gradients_match"
)


class Mistake:
    def __init__(
        self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=True
    ):
        super().__init__(num_features, eps, momentum, affine, track_running_stats)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
