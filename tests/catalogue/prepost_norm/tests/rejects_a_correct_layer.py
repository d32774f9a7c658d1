"""A weak test file that rejects a correct layer: besides two sound tests (the Post-LN
wrapper's formula, and eval mode dropping nothing), it asserts that the attention is built with
batch_first=True, an implementation detail: attention over (seq, batch, d_model) with a
transpose either side is as correct."""

import torch
import torch.nn.functional as F
from torch import nn

CATCHES = (
    "residual_norm_named_ln, postnorm_as_prenorm, postnorm_normalizes_both, "
    "inplace_residual, functional_dropout_always_on"
)
FALSE_ALARMS = "test_attention_is_batch_first"


def test_postnorm_residual_formula(kata):
    torch.manual_seed(0)
    sublayer = nn.Linear(8, 8)
    unit = kata.PostNormResidual(8, sublayer)
    x = torch.randn(4, 8) * 2 + 1
    want = F.layer_norm(x + sublayer(x), (8,), unit.norm.weight, unit.norm.bias)
    torch.testing.assert_close(unit(x), want)


def test_eval_mode_drops_nothing(kata):
    torch.manual_seed(1)
    block = kata.TransformerEncoderBlock(16, 4, dim_feedforward=32, dropout=0.5).eval()
    x = torch.randn(2, 5, 16)
    torch.testing.assert_close(block(x), block(x))


def test_attention_is_batch_first(kata):
    block = kata.TransformerEncoderBlock(16, 4, dim_feedforward=32)
    assert block.self_attn.batch_first
