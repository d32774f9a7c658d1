"""A weak test file: one comparison of the Post-LN block with nn.TransformerEncoderLayer, its
state_dict loaded, in eval mode on one input: torch's first parameter values (LayerNorms of
ones and zeros), no Pre-LN, no training, no gradients, no wrappers."""

import torch
from torch import nn

CATCHES = (
    "renamed_submodules, mask_buffer_in_state_dict, forgets_transpose_back, "
    "attention_not_batch_first, functional_dropout_always_on, gelu, no_ff_residual, "
    "relu_after_linear2, wirings_swapped"
)
FALSE_ALARMS = ""


def test_block_matches_torch(kata):
    torch.manual_seed(0)
    ref = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, batch_first=True).eval()
    block = kata.TransformerEncoderBlock(16, 4, dim_feedforward=32).eval()
    block.load_state_dict(ref.state_dict())
    x = torch.randn(2, 5, 16)
    with torch.enable_grad():
        want = ref(x)
    torch.testing.assert_close(block(x), want, rtol=1e-4, atol=1e-5)
