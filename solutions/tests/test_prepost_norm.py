"""The reference tests of the Pre-Norm and Post-Norm kata: the residual wrappers and the
Transformer encoder block.

Each test states one property. The wrappers are compared with their formulas, x +
sublayer(norm(x)) and norm(x + sublayer(x)), written out with F.layer_norm around a Linear
sublayer, and checked for their attributes and for calling the sublayer once. The block is
compared with nn.TransformerEncoderLayer(..., batch_first=True) holding the same parameters
(loaded through the state_dict, whose keys are the contract): outputs and gradients in both
wirings, in eval mode and in training with dropout 0; then its options and defaults, dropout
off in eval and on in training, the three dropouts where torch's are, the masks handed to the
attention, float64 kept, and the caller's input left alone.

torch's layer is run with autograd on, which keeps it off its fused inference path. Every
parameter of torch's layer is moved off its first value (LayerNorm weights start at one and
biases at zero), so that a parameter used in the wrong place shows in the output.
"""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

D, NHEAD, FF = 16, 4, 32
WRAPPERS = ["PreNormResidual", "PostNormResidual"]
TOL32 = {"rtol": 1e-4, "atol": 1e-5}
TOL64 = {"rtol": 1e-9, "atol": 1e-10}


def perturbed(module):
    """module with every parameter moved off its first value, in place."""
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.2 * torch.randn_like(p))
    return module


def torch_layer(norm_first, dropout=0.0, dim_feedforward=FF):
    """torch's encoder layer, batch first, with perturbed parameters."""
    layer = nn.TransformerEncoderLayer(
        D, NHEAD, dim_feedforward, dropout, batch_first=True, norm_first=norm_first
    )
    return perturbed(layer)


def pair(kata, norm_first, dropout=0.0):
    """The learner's block and torch's layer, holding the same parameters."""
    ref = torch_layer(norm_first, dropout)
    mine = kata.TransformerEncoderBlock(
        D, NHEAD, dim_feedforward=FF, dropout=dropout, norm_first=norm_first
    )
    mine.load_state_dict(ref.state_dict())
    return mine, ref


def wrapper(kata, kind, d=8):
    """The learner's wrapper around a Linear, its norm moved off its first values."""
    unit = getattr(kata, kind)(d, nn.Linear(d, d))
    perturbed(unit.norm)
    return unit


def formula(kind, unit, x):
    """What the wrapper computes, written out with the unit's own norm parameters."""
    norm = unit.norm

    def ln(v):
        return F.layer_norm(v, v.shape[-1:], norm.weight, norm.bias, norm.eps)

    if kind == "PreNormResidual":
        return x + unit.sublayer(ln(x))
    return ln(x + unit.sublayer(x))


class Counting(nn.Module):
    """A Linear sublayer that counts its calls and keeps what it was given."""

    def __init__(self, d):
        super().__init__()
        self.inner = nn.Linear(d, d)
        self.calls, self.seen = 0, None

    def forward(self, x):
        self.calls += 1
        self.seen = x.detach().clone()
        return self.inner(x)


class FixedMask(nn.Module):
    """Dropout with a fixed mask over the features, drawn from its own seed: the same in both
    blocks, whatever the order of the batch and sequence dims it is handed."""

    def __init__(self, seed, p=0.5):
        super().__init__()
        self.seed, self.p = seed, p

    def forward(self, x):
        gen = torch.Generator().manual_seed(self.seed)
        keep = torch.rand(x.shape[-1], generator=gen) >= self.p
        return x * keep.to(x.dtype) / (1 - self.p)


@pytest.mark.parametrize("kind", WRAPPERS)
def test_wrapper_formula(kata, kind):
    """PreNormResidual returns x + sublayer(norm(x)); PostNormResidual norm(x + sublayer(x))."""
    torch.manual_seed(0)
    for shape in ((4, 8), (2, 3, 8)):
        unit = wrapper(kata, kind).double()
        x = torch.randn(shape, dtype=torch.float64) * 3 + 1
        torch.testing.assert_close(unit(x), formula(kind, unit, x), **TOL64)


@pytest.mark.parametrize("kind", WRAPPERS)
def test_wrapper_gradients(kata, kind):
    """The wrapper's gradients, for x and every parameter, are the formula's."""
    torch.manual_seed(1)
    unit = wrapper(kata, kind).double()
    x = torch.randn(3, 8, dtype=torch.float64, requires_grad=True)
    grad_out = torch.randn(3, 8, dtype=torch.float64)
    params = [x, *unit.parameters()]
    got = torch.autograd.grad(unit(x), params, grad_out)
    want = torch.autograd.grad(formula(kind, unit, x), params, grad_out)
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, **TOL64)


@pytest.mark.parametrize("kind", WRAPPERS)
def test_wrapper_sublayer_input_and_calls(kata, kind):
    """The wrapper calls its sublayer once: on norm(x) in Pre-LN, on x itself in Post-LN."""
    torch.manual_seed(2)
    sub = Counting(8).double()
    unit = getattr(kata, kind)(8, sub).double()
    x = torch.randn(4, 8, dtype=torch.float64) * 3 + 1
    unit(x)
    assert sub.calls == 1
    if kind == "PreNormResidual":
        norm = unit.norm
        x = F.layer_norm(x, (8,), norm.weight, norm.bias, norm.eps).detach()
    torch.testing.assert_close(sub.seen, x, **TOL64)


@pytest.mark.parametrize("kind", WRAPPERS)
def test_wrapper_attributes(kata, kind):
    """The wrapper keeps an nn.LayerNorm(d_model) as `norm` and the module it was given as
    `sublayer`: its state_dict has norm.* and sublayer.* keys."""
    sub = nn.Linear(8, 8)
    unit = getattr(kata, kind)(8, sub)
    assert isinstance(unit.norm, nn.LayerNorm)
    assert tuple(unit.norm.normalized_shape) == (8,) and unit.norm.elementwise_affine
    assert unit.sublayer is sub
    assert sorted(unit.state_dict()) == [
        "norm.bias",
        "norm.weight",
        "sublayer.bias",
        "sublayer.weight",
    ]


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("training", [False, True])
def test_block_matches_torch(kata, norm_first, training):
    """With torch's parameters loaded, the block gives nn.TransformerEncoderLayer's output
    (batch_first=True), in eval mode and in training with dropout 0."""
    torch.manual_seed(10 + 2 * norm_first + training)
    mine, ref = pair(kata, norm_first)
    mine.train(training)
    ref.train(training)
    for shape in ((2, 5, D), (3, 1, D)):
        x = torch.randn(shape)
        torch.testing.assert_close(mine(x), ref(x), **TOL32)


@pytest.mark.parametrize("norm_first", [False, True])
def test_block_gradients_match_torch(kata, norm_first):
    """The gradients for the input and every parameter are torch's (float64, dropout 0)."""
    torch.manual_seed(20 + norm_first)
    mine, ref = pair(kata, norm_first)
    mine, ref = mine.double().train(), ref.double().train()
    x = torch.randn(2, 5, D, dtype=torch.float64)
    grad_out = torch.randn_like(x)
    grads = []
    for block in (mine, ref):
        xi = x.clone().requires_grad_()
        names, params = zip(*block.named_parameters(), strict=True)
        got = torch.autograd.grad(block(xi), [xi, *params], grad_out, allow_unused=True)
        grads.append({"x": got[0], **dict(zip(names, got[1:], strict=True))})
    assert grads[0].keys() == grads[1].keys()
    for name, want in grads[1].items():
        assert grads[0][name] is not None, name
        torch.testing.assert_close(grads[0][name], want, **TOL64, msg=name)


@pytest.mark.parametrize("norm_first", [False, True])
def test_block_computes_in_float64(kata, norm_first):
    """A float64 block matches torch's float64 layer to float64's precision."""
    torch.manual_seed(30 + norm_first)
    mine, ref = pair(kata, norm_first)
    mine, ref = mine.double().eval(), ref.double().eval()
    x = torch.randn(2, 5, D, dtype=torch.float64, requires_grad=True)
    got = mine(x)
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, ref(x), **TOL64)


def test_state_dict_keys_are_torchs(kata):
    """The block's state_dict has nn.TransformerEncoderLayer's keys and shapes: each loads
    strictly into the other."""
    for norm_first in (False, True):
        mine = kata.TransformerEncoderBlock(D, NHEAD, FF, 0.1, norm_first)
        ref = nn.TransformerEncoderLayer(D, NHEAD, FF, 0.1, batch_first=True, norm_first=norm_first)
        theirs, ours = ref.state_dict(), mine.state_dict()
        assert sorted(ours) == sorted(theirs)
        assert all(ours[k].shape == theirs[k].shape for k in theirs)
        mine.load_state_dict(theirs)
        ref.load_state_dict(ours)


def test_block_submodules_and_options(kata):
    """Each argument reaches its submodule: self_attn over d_model with nhead heads and the
    block's dropout, linear1 to dim_feedforward and linear2 back, dropout modules at the
    block's rate, two LayerNorms, and norm_first kept."""
    block = kata.TransformerEncoderBlock(D, NHEAD, dim_feedforward=24, dropout=0.3, norm_first=True)
    attn = block.self_attn
    assert isinstance(attn, nn.MultiheadAttention)
    assert (attn.embed_dim, attn.num_heads, attn.dropout) == (D, NHEAD, 0.3)
    assert (block.linear1.in_features, block.linear1.out_features) == (D, 24)
    assert (block.linear2.in_features, block.linear2.out_features) == (24, D)
    for name in ("dropout", "dropout1", "dropout2"):
        assert getattr(block, name).p == 0.3, name
    for name in ("norm1", "norm2"):
        assert isinstance(getattr(block, name), nn.LayerNorm), name
    assert block.norm1 is not block.norm2
    assert block.norm_first is True


def test_block_defaults(kata):
    """The defaults are torch's: dim_feedforward 2048, dropout 0.1, norm_first False."""
    block = kata.TransformerEncoderBlock(D, NHEAD)
    assert block.linear1.out_features == 2048 and block.linear2.in_features == 2048
    assert block.self_attn.dropout == 0.1
    for name in ("dropout", "dropout1", "dropout2"):
        assert getattr(block, name).p == 0.1, name
    assert block.norm_first is False


@pytest.mark.parametrize("norm_first", [False, True])
def test_dropout_off_in_eval(kata, norm_first):
    """With dropout 0.5, eval mode drops nothing: the output is torch's eval-mode output."""
    torch.manual_seed(40 + norm_first)
    mine, ref = pair(kata, norm_first, dropout=0.5)
    mine.eval()
    ref.eval()
    x = torch.randn(2, 5, D)
    torch.testing.assert_close(mine(x), ref(x), **TOL32)


@pytest.mark.parametrize("norm_first", [False, True])
def test_dropout_active_in_training(kata, norm_first):
    """With dropout 0.5, training drops: its output differs from eval mode's and between
    two calls."""
    torch.manual_seed(50 + norm_first)
    mine, _ = pair(kata, norm_first, dropout=0.5)
    x = torch.randn(2, 5, D)
    with torch.no_grad():
        evaluated = mine.eval()(x)
        mine.train()
        first, second = mine(x), mine(x)
    assert not torch.allclose(first, evaluated)
    assert not torch.allclose(first, second)


@pytest.mark.parametrize("norm_first", [False, True])
def test_dropouts_where_torchs_are(kata, norm_first):
    """dropout1 acts on the attention output, dropout after the ReLU, dropout2 after linear2:
    with the same fixed masks in both, training matches torch's layer."""
    torch.manual_seed(60 + norm_first)
    mine, ref = pair(kata, norm_first, dropout=0.5)
    for block in (mine, ref):
        block.self_attn.dropout = 0.0
        block.dropout1, block.dropout, block.dropout2 = (FixedMask(s) for s in (1, 2, 3))
        block.train()
    x = torch.randn(2, 5, D)
    torch.testing.assert_close(mine(x), ref(x), **TOL32)


@pytest.mark.parametrize("norm_first", [False, True])
def test_masks_reach_the_attention(kata, norm_first):
    """src_mask and src_key_padding_mask are handed to the attention, as torch does."""
    torch.manual_seed(70 + norm_first)
    mine, ref = pair(kata, norm_first)
    mine.eval()
    ref.eval()
    x = torch.randn(3, 6, D)
    causal = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)
    padding = torch.zeros(3, 6, dtype=torch.bool)
    padding[1, 4:] = True
    padding[2, 2:] = True
    for masks in (
        {"src_mask": causal},
        {"src_key_padding_mask": padding},
        {"src_mask": causal, "src_key_padding_mask": padding},
    ):
        torch.testing.assert_close(mine(x, **masks), ref(x, **masks), **TOL32)


def test_input_left_alone(kata):
    """The block and the wrappers leave the caller's input as it was."""
    torch.manual_seed(80)
    for norm_first in (False, True):
        mine, _ = pair(kata, norm_first)
        x = torch.randn(2, 5, D)
        before = x.clone()
        with torch.no_grad():
            mine.eval()(x)
        assert torch.equal(x, before)
    for kind in WRAPPERS:
        x = torch.randn(4, 8)
        before = x.clone()
        with torch.no_grad():
            wrapper(kata, kind)(x)
        assert torch.equal(x, before)


def test_to_float64_moves_every_tensor(kata):
    """After .to(torch.float64), every tensor the block and the wrappers hold is float64:
    parameters, buffers and any tensor kept as an attribute."""
    modules = [
        kata.TransformerEncoderBlock(D, NHEAD, FF, 0.1, norm_first) for norm_first in (False, True)
    ]
    modules += [getattr(kata, kind)(8, nn.Linear(8, 8)) for kind in WRAPPERS]
    for module in modules:
        module.to(torch.float64)
        for sub in module.modules():
            for name, value in (*sub.named_parameters(), *sub.named_buffers(), *vars(sub).items()):
                if isinstance(value, torch.Tensor) and value.is_floating_point():
                    assert value.dtype == torch.float64, f"{type(sub).__name__}.{name}"
