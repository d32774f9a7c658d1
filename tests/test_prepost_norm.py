"""Hidden checks for the Pre/Post-Norm kata.

The residual wrappers are compared with their formulas, written out with F.layer_norm around
deterministic sublayers (a Linear, a small MLP). The encoder block is compared with
nn.TransformerEncoderLayer(..., batch_first=True) after loading its state_dict. Torch's layer
is always run with autograd enabled: that keeps it off its fused inference path, which returns
zeros at padded positions and would not be a like-for-like comparison. Which dtype the norms
compute in is dtype policy: the core compares float64 outputs at float32's tolerance, so norms
that compute in float32 whatever they are given (fairseq's Fp32LayerNorm) solve it, and
test_computes_in_float64 (torch parity) asks for float64 arithmetic.

Each core property in every wiring and mode where it applies (the wrappers have no mode: their
sublayers are deterministic):

    property                    Post-LN (norm_first=False)        Pre-LN (norm_first=True)
    wrapper formula, gradients  postnorm_residual, gradients_..   prenorm_residual, gradients_..
    wrapper's sublayer input    sublayer_input, residual_path_..  sublayer_input, residual_path_..
    block matches torch, eval   post_norm_block_matches_torch     pre_norm_block_matches_torch
    block matches torch, train  post_norm_block_matches_torch     pre_norm_block_matches_torch
      (dropout=0.0)
    block gradients, train      gradients_match (dropout 0)       gradients_match (dropout 0)
    dropout off in eval         dropout_off_in_eval               dropout_off_in_eval
    dropout on in training      dropout_active_in_train           dropout_active_in_train
    attention per sequence      attention_over_sequence           attention_over_sequence
    dropouts where torch's are  dropout_placement (parity)        dropout_placement (parity)
    masks passed through        masks_match_torch (parity)        masks_match_torch (parity)
"""

import inspect

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from norm_katas.checks import (
    CountingLinear,
    FixedMask,
    PerfCase,
    RecordingLinear,
    Suite,
    backward_grads,
    expect_close,
    expect_float64_arithmetic,
    expect_follows_device,
    expect_from_scratch,
    expect_grads_close,
    expect_input_unmodified,
    expect_like,
    expect_registered_state,
    expect_state_dict_round_trip,
    expect_vectorized,
    fail,
    fail_for,
    forward_with_grad,
    load_torch_state,
    perturbed,
    shape_of,
    skip_unless_close,
)

SUITE = Suite()

D, NHEAD, FF = 16, 4, 32  # a small block: every check runs in well under a second
NORM_FIRST = (False, True)  # Post-LN, then Pre-LN

# The whole-layer built-ins: using them skips the exercise (the wiring).
FORBIDDEN = frozenset({"_transformer_encoder_layer_fwd"})
FORBIDDEN_MODULES: tuple[type[nn.Module], ...] = (
    nn.TransformerEncoderLayer, nn.TransformerEncoder, nn.Transformer,
)  # fmt: skip
WIRE_IT = (
    "Wire the block yourself from nn.MultiheadAttention, nn.Linear, nn.LayerNorm and nn.Dropout."
)
NAMES_ADVICE = (
    "Use torch's submodule names: self_attn, linear1, dropout, linear2, norm1, norm2, "
    "dropout1, dropout2."
)


def test_residual_attributes(kata):
    """each wrapper keeps its LayerNorm in `norm` and the sublayer in `sublayer`

    Submodules assigned as attributes in __init__ are registered: their parameters reach the
    optimizer and the state_dict.

    Give the wrapper a new nn.LayerNorm over d_model as its norm attribute, and as its
    sublayer attribute the module it was handed (that module, not a copy): the state_dict then
    reads norm.weight, norm.bias, sublayer.weight, sublayer.bias.
    """
    for kind in ("PreNormResidual", "PostNormResidual"):
        sub = nn.Linear(8, 8)
        unit = getattr(kata, kind)(8, sub)
        given = unit_name(kind, 8)
        norm = getattr(unit, "norm", None)
        if not isinstance(norm, nn.LayerNorm):
            got = type(norm).__name__ if norm is not None else "no attribute norm"
            fail(f"{given}.norm should be an nn.LayerNorm(8), got {got}.")
        if tuple(norm.normalized_shape) != (8,) or not norm.elementwise_affine:
            fail(f"{given}.norm should be nn.LayerNorm(8) with its affine parameters, got {norm}.")
        if getattr(unit, "sublayer", None) is not sub:
            fail(f"{given}.sublayer should be the module passed in (the same object).")
        want = ["norm.bias", "norm.weight", "sublayer.bias", "sublayer.weight"]
        have = sorted(unit.state_dict())
        if have != want:
            fail(f"{given}: the state_dict has keys {have}, expected {want}.")


def test_sublayer_called_once(kata, device):
    """each wrapper calls its sublayer exactly once per forward

    The sublayer is the expensive part (attention, the MLP), and may be random (dropout):
    run it once and reuse the result.

    h = F(·) once per forward; the sum uses that h.
    """
    x = torch.randn(4, 8, device=device)
    for kind in ("PreNormResidual", "PostNormResidual"):
        sub = CountingLinear(8)
        unit = getattr(kata, kind)(8, sub).to(device)
        unit(x)
        if sub.calls != 1:
            fail(
                f"{unit_name(kind, 8)}: one forward called the sublayer {sub.calls} times, "
                "expected once."
            )


def test_sublayer_input(kata, device):
    """Pre-LN hands the sublayer norm(x); Post-LN hands it x itself

    The two wirings differ in what the sublayer sees: Pre-LN normalizes on the way in,
    Post-LN normalizes after the residual sum, so its sublayer gets the raw x.

    Pre-LN: the sublayer F sees LN(x); Post-LN: F sees x itself.
    """
    x = torch.randn(4, 8, device=device) * 3 + 1
    for kind in ("PreNormResidual", "PostNormResidual"):
        sub = RecordingLinear(8)
        unit = residual(kata, kind, 8, sub).to(device)
        unit(x.clone())  # a copy: what the sublayer must see is computed from x as it was
        given = f"{kind}(8, sublayer) on x {shape_of(x)}"
        if sub.seen is None:
            fail(f"{given}: forward never called the sublayer.")
        if kind == "PreNormResidual":
            expect_close(
                sub.seen, layer_norm(x, unit).detach(), given=given, what="sublayer input (norm(x))"
            )
        else:
            expect_close(sub.seen, x, given=given, what="sublayer input (x itself)")


def test_residual_path_is_x(kata, device):
    """the residual path is x itself: a zero sublayer makes Pre-LN the identity, Post-LN norm(x)

    The skip connection adds back the input as it came in: in Pre-LN the normalized copy
    goes only into the sublayer.

    Pre-LN: x + sublayer(norm(x)), not norm(x) + sublayer(norm(x)); a sublayer that outputs
    zeros then leaves x unchanged.
    """
    x = torch.randn(4, 8, device=device) * 3 + 1
    for kind in ("PreNormResidual", "PostNormResidual"):
        sub = RecordingLinear(8)  # zero weights and bias: it returns zeros, and keeps its input
        nn.init.zeros_(sub.inner.weight)
        nn.init.zeros_(sub.inner.bias)
        unit = residual(kata, kind, 8, sub).to(device)
        given = f"{kind}(8, sublayer returning zeros) on x {shape_of(x)}"
        out = unit(x.clone())
        normed = layer_norm(x, unit).detach()
        expected = x if kind == "PreNormResidual" else normed
        # Where the sublayer was handed what the other wiring hands it, the wrapper is wired
        # as the other one: that is test_sublayer_input's mistake, met here as a wrong output.
        other = normed if kind == "PostNormResidual" else x
        wired_as_other = (
            isinstance(out, torch.Tensor)
            and out.shape == x.shape
            and not torch.allclose(out.detach(), expected, rtol=1e-5, atol=1e-5)
            and sub.seen is not None
            and torch.allclose(sub.seen, other, rtol=1e-5, atol=1e-5)
        )
        if wired_as_other:
            handed = "norm(x)" if kind == "PostNormResidual" else "x itself"
            fail_for(
                "test_sublayer_input",
                f"{given}: the output is not {'x' if kind == 'PreNormResidual' else 'norm(x)'}, "
                f"and the sublayer was handed {handed}: the wrapper is wired as the other one.",
            )
        expect_close(out, expected, given=given)


@pytest.mark.broad
def test_prenorm_residual(kata, device):
    """PreNormResidual returns x + sublayer(norm(x))

    Pre-LN normalizes what goes into the sublayer, never the residual stream itself.

    Pre-LN: y = x + F(LN(x)), the residual being the original x.
    """
    _residual_matches(kata, device, "PreNormResidual", pre_norm)


@pytest.mark.broad
def test_postnorm_residual(kata, device):
    """PostNormResidual returns norm(x + sublayer(x))

    Post-LN gives the sublayer the raw x and normalizes after the addition: every Post-LN
    output is normalized.

    Post-LN: y = LN(x + F(x)).
    """
    _residual_matches(kata, device, "PostNormResidual", post_norm)


def test_block_submodules(kata):
    """the block has nn.TransformerEncoderLayer's submodules, configured like torch's

    Each argument reaches the submodule that uses it, and the defaults are torch's: a
    dim_feedforward of 2048, a dropout of 0.1, and norm_first False.

    self_attn is an nn.MultiheadAttention over d_model, nhead heads, the block's dropout and
    the batch first; linear1 maps d_model to dim_feedforward and linear2 maps it back; norm1
    and norm2 are LayerNorms over d_model with torch's eps, 1e-5; dropout, dropout1 and
    dropout2 are nn.Dropout modules at the block's rate; and the block keeps norm_first as an
    attribute.
    """
    explicit = {"dim_feedforward": 32, "dropout": 0.3, "norm_first": True}
    for kwargs, (ff, p, norm_first) in ((explicit, (32, 0.3, True)), ({}, (2048, 0.1, False))):
        block = kata.TransformerEncoderBlock(16, 4, **kwargs)
        shown = "".join(f", {k}={v}" for k, v in kwargs.items())
        given = f"TransformerEncoderBlock(16, 4{shown})"
        attn = getattr(block, "self_attn", None)
        if not isinstance(attn, nn.MultiheadAttention):
            fail(
                f"{given}.self_attn should be an nn.MultiheadAttention, got {type(attn).__name__}."
            )
        # batch_first is the learner's choice: (seq, batch) attention with transposes is fine.
        have = (attn.embed_dim, attn.num_heads, attn.dropout)
        if have != (16, 4, p):
            fail(
                f"{given}.self_attn has embed_dim, num_heads, dropout = {have}, "
                f"expected {(16, 4, p)}: nn.MultiheadAttention(d_model, nhead, dropout=dropout)."
            )
        for name, (n_in, n_out) in (("linear1", (16, ff)), ("linear2", (ff, 16))):
            lin = getattr(block, name, None)
            sizes = (lin.in_features, lin.out_features) if isinstance(lin, nn.Linear) else None
            if sizes != (n_in, n_out):
                fail(f"{given}.{name} should be nn.Linear({n_in}, {n_out}), got {lin}.")
        for name in ("norm1", "norm2"):
            norm = getattr(block, name, None)
            if not isinstance(norm, nn.LayerNorm) or tuple(norm.normalized_shape) != (16,):
                fail(f"{given}.{name} should be nn.LayerNorm(16), got {norm}.")
            # torch's layer_norm_eps: another eps (1e-6, BERT's 1e-12) shows in the outputs
            # only by parts in 1e5 or less, where a comparison's tolerance can let it pass.
            if norm.eps != 1e-5:
                fail(
                    f"{given}.{name} has eps={norm.eps:g}, expected 1e-5: torch's "
                    "TransformerEncoderLayer builds its norms with layer_norm_eps=1e-5."
                )
        for name in ("dropout", "dropout1", "dropout2"):
            drop = getattr(block, name, None)
            if not isinstance(drop, nn.Module) or getattr(drop, "p", None) != p:
                fail(f"{given}.{name} should be nn.Dropout({p}), got {drop}.")
        if getattr(block, "norm_first", None) is not norm_first:
            fail(
                f"{given}.norm_first should be {norm_first}, "
                f"got {getattr(block, 'norm_first', 'nothing')}."
            )


def test_two_distinct_norms(kata):
    """norm1 and norm2 are two separate LayerNorms, sharing no parameters

    The attention and the feed-forward sub-blocks each learn their own scale and shift.

    Build two nn.LayerNorm modules over d_model, one as norm1 and one as norm2: one module
    assigned to both names shares its weight and bias.
    """
    for norm_first in NORM_FIRST:
        block = kata.TransformerEncoderBlock(
            D, NHEAD, dim_feedforward=FF, dropout=0.0, norm_first=norm_first
        )
        given = block_name(norm_first)
        if not all(isinstance(getattr(block, n, None), nn.Module) for n in ("norm1", "norm2")):
            fail_for(
                "test_block_submodules",
                f"{given}: no norm1 and norm2 submodules to compare. {NAMES_ADVICE}",
            )
        if block.norm1 is block.norm2:
            fail(f"{given}: norm1 and norm2 are the same module; create two nn.LayerNorm(d_model).")
        for name in ("weight", "bias"):
            a, b = getattr(block.norm1, name, None), getattr(block.norm2, name, None)
            if (
                isinstance(a, torch.Tensor)
                and isinstance(b, torch.Tensor)
                and a.data_ptr() == b.data_ptr()
            ):
                fail(
                    f"{given}: norm1.{name} and norm2.{name} share their storage; "
                    "give each norm its own."
                )
        ref = torch_layer(norm_first)
        with torch.no_grad():  # only the norms: the rest of the block is other checks' business
            block.norm1.weight.copy_(ref.norm1.weight)
            block.norm2.weight.copy_(ref.norm2.weight)
        if torch.equal(block.norm1.weight, block.norm2.weight):
            fail(
                f"{given}: after setting norm1.weight and norm2.weight to different values, "
                "they are equal: the two norms share their parameters."
            )


def test_state_dict_round_trip(kata):
    """state_dict loads from nn.TransformerEncoderLayer and into it, both ways

    A checkpoint of nn.TransformerEncoderLayer must load strictly into your block (every key
    matched, none left over), and yours into it: the names are the contract.

    Name the submodules self_attn, linear1, dropout, linear2, norm1, norm2, dropout1,
    dropout2, each an attribute of the block itself (no nn.Sequential around them).
    """
    for norm_first in NORM_FIRST:
        mine = kata.TransformerEncoderBlock(
            D, NHEAD, dim_feedforward=FF, dropout=0.1, norm_first=norm_first
        )
        ref = nn.TransformerEncoderLayer(D, NHEAD, FF, 0.1, batch_first=True, norm_first=norm_first)
        given = block_name(norm_first, 0.1)
        norms = [getattr(mine, n, None) for n in ("norm1", "norm2")]
        weights = [getattr(n, "weight", None) for n in norms]
        if all(isinstance(w, torch.Tensor) for w in weights) and (
            norms[0] is norms[1] or weights[0].data_ptr() == weights[1].data_ptr()
        ):
            fail_for(
                "test_two_distinct_norms",
                f"{given}: norm1 and norm2 share their parameters, so a checkpoint's two norms "
                "cannot both load into them.",
            )
        expect_state_dict_round_trip(mine, ref, given=given)


def test_input_unmodified(kata, device):
    """the input tensor is left unmodified

    An in-place update of x changes the caller's tensor (and breaks autograd when x requires
    grad).

    Make each residual sum a new tensor, x plus the branch, never an augmented assignment to x
    or an in-place method (add_ and its kin).
    """
    for norm_first in NORM_FIRST:
        mine = own_block(kata, norm_first)
        x = torch.randn(2, 5, D, device=device)
        expect_input_unmodified(mine.to(device).eval(), x, given=block_name(norm_first))
    for kind in ("PreNormResidual", "PostNormResidual"):
        x = torch.randn(4, 8, device=device)
        unit = getattr(kata, kind)(8, nn.Linear(8, 8)).to(device)
        expect_input_unmodified(unit, x, given=f"{kind}(8, nn.Linear)")


def test_output_like_input(kata, device):
    """the block maps (batch, seq, d_model) to (batch, seq, d_model), same dtype and device

    The block is batch first: the batch comes first, in the input and in the output.

    Keep x as (batch, seq, d_model) throughout; a (seq, batch, d_model) transpose inside
    must be undone before returning.
    """
    x = torch.randn(3, 5, D, device=device)
    for norm_first in NORM_FIRST:
        block = kata.TransformerEncoderBlock(
            D, NHEAD, dim_feedforward=FF, dropout=0.0, norm_first=norm_first
        )
        expect_like(
            block.to(device).eval()(x), x, given=f"{block_name(norm_first)} on x {shape_of(x)}"
        )
    for kind in ("PreNormResidual", "PostNormResidual"):
        unit = getattr(kata, kind)(D, nn.Linear(D, D)).to(device)
        expect_like(unit(x), x, given=f"{kind}({D}, nn.Linear) on x {shape_of(x)}")


def test_from_scratch(kata, device, monkeypatch):
    """wired by hand, not with nn.TransformerEncoderLayer (or its fused kernel)

    The wiring is the exercise: the parts are given, the block that assembles them is not.

    Use nn.MultiheadAttention, nn.Linear, nn.LayerNorm, nn.Dropout and F.relu; not
    nn.TransformerEncoderLayer, nn.TransformerEncoder, nn.Transformer or
    torch._transformer_encoder_layer_fwd, even subclassed or hidden.
    """
    ran = []
    for cls in FORBIDDEN_MODULES:  # also catches one kept out of sight (not a registered submodule)

        def spy(self, *args, _forward=cls.forward, _name=cls.__name__, **kwargs):
            ran.append(_name)
            return _forward(self, *args, **kwargs)

        monkeypatch.setattr(cls, "forward", spy)
    for norm_first in NORM_FIRST:
        mine = own_block(kata, norm_first).to(device).eval()
        given = block_name(norm_first)
        x = torch.randn(2, 5, D, device=device)
        with torch.no_grad():
            expect_from_scratch(
                lambda mine=mine, x=x: mine(x),
                FORBIDDEN,
                module=mine,
                forbidden_modules=FORBIDDEN_MODULES,
                advice=WIRE_IT,
            )
        if ran:
            fail(f"{given}: forward runs an nn.{ran[0]}. {WIRE_IT}")


def test_vectorized(kata, device):
    """vectorized: no Python loop over the batch or the sequence positions

    nn.MultiheadAttention, nn.Linear and nn.LayerNorm all take a whole (batch, seq, d_model)
    tensor at once.

    Call each submodule once per forward on all of x, not once per sample or per position.
    """
    for norm_first in NORM_FIRST:
        small, large = own_block(kata, norm_first), own_block(kata, norm_first)
        small, large = small.to(device).eval(), large.to(device).eval()
        xs, xl = torch.randn(2, 4, D, device=device), torch.randn(8, 64, D, device=device)
        expect_vectorized(
            lambda block, x: block(x), (small, xs), (large, xl), given=block_name(norm_first)
        )


def test_to_dtype(kata, device):
    """after .to(torch.float64) every tensor the block and the wrappers hold is float64

    .to() moves parameters and buffers, in the submodules too; a tensor kept as a plain
    attribute stays behind, in its old dtype and on its old device.

    No tensors kept as plain attributes: nn.Parameter, register_buffer, or a Python float.
    """
    for norm_first in NORM_FIRST:
        double = own_block(kata, norm_first).to(device, torch.float64)
        expect_registered_state(
            double, dtype=torch.float64, given=f"{block_name(norm_first)}.to(float64)"
        )
    for kind in ("PreNormResidual", "PostNormResidual"):
        double = getattr(kata, kind)(8, nn.Linear(8, 8)).to(device, torch.float64)
        expect_registered_state(
            double, dtype=torch.float64, given=f"{kind}(8, nn.Linear).to(float64)"
        )


def test_attention_over_sequence(kata, device):
    """attention mixes positions within each sequence, never across the batch (batch_first=True)

    Samples in a batch are independent: changing one must leave the others' outputs as they
    were, while every position of a sequence sees the others.

    nn.MultiheadAttention reads (seq, batch, d_model) unless built batch first (its
    batch_first flag set); given a (batch, seq, d_model) input without it, it attends across
    the batch.
    """
    for norm_first in NORM_FIRST:
        mine = own_block(kata, norm_first).to(device).eval()
        x = torch.randn(3, 5, D, device=device)
        changed = x.clone()
        changed[1] += torch.randn(5, D, device=device)
        given = (
            f"{block_name(norm_first)} in eval mode on x {shape_of(x)} "
            "and on x with sample 1 changed"
        )
        y, y_changed = (batch_first_output(mine(v), x, given=given) for v in (x.clone(), changed))
        for b in (0, 2):
            expect_close(y_changed[b], y[b], given=given, what=f"output of sample {b}")
        late = x.clone()
        late[0, 4] += torch.randn(D, device=device)
        if torch.allclose(batch_first_output(mine(late), x, given=given)[0, :4], y[0, :4]):
            fail(
                f"{block_name(norm_first)}: changing position 4 of sample 0 left positions 0-3 "
                "unchanged: the attention does not see the whole sequence (a causal mask?)."
            )


def test_dropout_off_in_eval(kata, device):
    """with dropout > 0, eval mode applies no dropout: the output is the dropout=0 block's

    Dropout acts only in training: nn.Dropout modules follow the model's eval mode by
    themselves.

    The functional dropout drops unless it is told the module's training flag; call the block's
    own dropout modules (dropout1, dropout and dropout2) instead.
    """
    for norm_first in NORM_FIRST:
        mine = own_block(kata, norm_first, dropout=0.5)
        plain = kata.TransformerEncoderBlock(
            D, NHEAD, dim_feedforward=FF, dropout=0.0, norm_first=norm_first
        )
        # The learner's own parameters, whatever their names: those are other checks' business.
        try:
            plain.load_state_dict(mine.state_dict())
        except Exception as e:
            fail(
                f"{block_name(norm_first)}: could not load the state_dict of your block built "
                f"with dropout=0.5 into one built with dropout=0.0: {e}. The dropout rate "
                "should change no parameter or buffer."
            )
        mine, plain = mine.to(device).eval(), plain.to(device).eval()
        x = torch.randn(2, 5, D, device=device)
        given = (
            f"{block_name(norm_first, 0.5)} in eval mode on x {shape_of(x)}, compared with the "
            "same block built with dropout=0.0"
        )
        expect_close(mine(x.clone()), plain(x.clone()).detach(), given=given)


def test_dropout_active_in_train(kata, device):
    """with dropout > 0, train mode drops: its outputs differ from eval mode's and between calls

    The dropout modules must be applied in forward; creating them is not enough, and each
    call draws a fresh mask.

    dropout1 on the attention output, dropout after the ReLU, dropout2 on the feed-forward
    output; self_attn gets the block's dropout rate too.
    """
    for norm_first in NORM_FIRST:
        mine = own_block(kata, norm_first, dropout=0.5).to(device)
        x = torch.randn(2, 5, D, device=device)
        given = f"{block_name(norm_first, 0.5)} on x {shape_of(x)}"
        # Each call on a copy of x: whether forward writes into x is test_input_unmodified's.
        evaluated = mine.eval()(x.clone()).detach()
        mine.train()
        first, second = mine(x.clone()).detach(), mine(x.clone()).detach()
        if torch.allclose(first, evaluated):
            fail(
                f"{given}: the output in train mode equals the one in eval mode, "
                "so nothing is dropped."
            )
        if torch.allclose(first, second):
            fail(
                f"{given}: two forward passes in train mode gave the same output: "
                "draw a new mask on each call."
            )


def test_follows_device(kata, device):
    """runs on CUDA: parameters move with .to(device), nothing is created on the CPU

    A tensor made inside forward (a default mask, a constant) is created on the CPU unless
    told otherwise, while x and the weights are on the GPU.

    Make a default mask on x's device (or like x), or pass no mask at all and let
    nn.MultiheadAttention do without one.
    """
    x = torch.randn(2, 5, D)
    for kind in ("PreNormResidual", "PostNormResidual"):
        unit = getattr(kata, kind)(D, nn.Linear(D, D))
        expect_follows_device(unit, x, device=device, given=f"{kind}({D}, nn.Linear)")
    for norm_first in NORM_FIRST:
        # Eval mode: that is where simulated CUDA can run nn.MultiheadAttention.
        block = kata.TransformerEncoderBlock(
            D, NHEAD, dim_feedforward=FF, dropout=0.1, norm_first=norm_first
        )
        expect_follows_device(
            block.eval(), x, device=device, given=f"{block_name(norm_first, 0.1)} in eval mode"
        )


@pytest.mark.broad
def test_post_norm_block_matches_torch(kata, device):
    """norm_first=False (Post-LN) matches nn.TransformerEncoderLayer in eval and with dropout 0

    Post-LN: two residual units, attention then feed-forward, each normalized after its
    addition; the feed-forward is Linear, ReLU, Linear. Built with dropout=0.0, the block drops
    nothing in training either.

    x ← LN₁(x + SA(x)); x ← LN₂(x + FF(x)), with SA(h) = drop₁(attention(h, h, h)) and FF(h) =
    drop₂(W₂ · drop(relu(W₁ · h))).
    """
    _block_matches_torch(kata, device, norm_first=False)


@pytest.mark.broad
def test_pre_norm_block_matches_torch(kata, device):
    """norm_first=True (Pre-LN) matches nn.TransformerEncoderLayer in eval and with dropout 0

    Pre-LN normalizes only each branch's input: the un-normalized x is the residual, and the
    block's output is not normalized. Built with dropout=0.0, it drops nothing in training.

    x = x + SA(norm1(x)); x = x + FF(norm2(x)), with the same SA and FF as Post-LN.
    """
    _block_matches_torch(kata, device, norm_first=True)


@pytest.mark.broad
def test_gradients_match(kata, device):
    """gradients for the input and every parameter match torch's (float64, train mode, dropout 0)

    Every path from x to the output must stay in the autograd graph, in the block and in the
    residual wrappers: queries, keys and values all depend on x.

    Nothing detached, nothing read through a tensor's data attribute, no no_grad block and no
    in-place edit between x and the output.
    """
    for norm_first in NORM_FIRST:
        mine, ref = block_pair(kata, norm_first)
        mine, ref = mine.to(device, torch.float64).train(), ref.to(device, torch.float64).train()
        x = torch.randn(2, 5, D, dtype=torch.float64, device=device)
        grad_out = torch.randn_like(x)
        (x_mine, out_mine), (x_ref, out_ref) = (forward_with_grad(m, x) for m in (mine, ref))
        skip_unless_close(out_mine, out_ref, "the block's output")
        got = backward_grads(out_mine, grad_out, x_mine, mine)
        want = backward_grads(out_ref, grad_out, x_ref, ref)
        expect_grads_close(
            got, want, given=f"{block_name(norm_first)} in train mode on x {shape_of(x)}"
        )
    for kind, formula in (("PreNormResidual", pre_norm), ("PostNormResidual", post_norm)):
        unit = residual(kata, kind, 8, nn.Linear(8, 8)).to(device, torch.float64)
        x = torch.randn(3, 8, dtype=torch.float64, device=device)
        grad_out = torch.randn_like(x)
        x_mine, out_mine = forward_with_grad(unit, x)
        x_ref, out_ref = forward_with_grad(lambda xi, f=formula, u=unit: f(xi, u, u.sublayer), x)
        skip_unless_close(out_mine, out_ref, f"the {kind} output")
        got = backward_grads(out_mine, grad_out, x_mine, unit)
        want = backward_grads(out_ref, grad_out, x_ref, unit)  # the same parameters, cleared
        expect_grads_close(got, want, given=f"{kind}(8, nn.Linear) on x {shape_of(x)}")


@pytest.mark.parity
def test_computes_in_float64(kata, device):
    """a float64 input is computed in float64 by the block and the wrappers, as torch's layer is

    Let the module's dtype flow through forward: torch computes a float64 layer in float64,
    and a cast of x to float32, or a norm that computes in float32 (fairseq's Fp32LayerNorm),
    rounds it to float32's 7 significant digits.

    Cast nothing to float32 inside forward: the dtype comes from x and the weights.
    """
    for norm_first in NORM_FIRST:
        double = own_block(kata, norm_first).to(device, torch.float64).eval()
        x = torch.randn(2, 5, D, device=device, dtype=torch.float64)
        given = f"{block_name(norm_first)}.to(float64) on x {shape_of(x)}"
        expect_float64_arithmetic(double, x, given=given)
    for kind in ("PreNormResidual", "PostNormResidual"):
        double = getattr(kata, kind)(8, nn.Linear(8, 8)).to(device, torch.float64)
        x = torch.randn(3, 8, device=device, dtype=torch.float64)
        given = f"{kind}(8, nn.Linear).to(float64) on x {shape_of(x)}"
        expect_float64_arithmetic(double, x, given=given)


@pytest.mark.parity
def test_dropout_placement(kata, device):
    """the three dropouts sit where torch's are: after attention, after the ReLU, after linear2

    Dropout belongs on the residual branches, never on the sum. The check swaps your dropout
    modules and torch's for the same fixed masks and compares in train mode, so call the
    modules, not F.dropout.

    SA(h) = drop₁(attention(h, h, h)); FF(h) = drop₂(W₂ · drop(relu(W₁ · h))); the sums x + SA and x
    + FF are never dropped.
    """
    for norm_first in NORM_FIRST:
        mine, ref = block_pair(kata, norm_first, dropout=0.5)
        mine, ref = mine.to(device), ref.to(device)
        x = torch.randn(2, 5, D, device=device)
        skip_unless_close(mine.eval()(x.clone()), ref.eval()(x), "the block's eval-mode output")
        for block in (mine, ref):
            block.self_attn.dropout = 0.0  # dropout on the attention weights is torch's own
            block.dropout1, block.dropout, block.dropout2 = (FixedMask(i, 0.5) for i in (1, 2, 3))
        mine, ref = mine.to(device).train(), ref.to(device).train()
        given = (
            f"{block_name(norm_first, 0.5)} in train mode with fixed dropout masks, "
            f"on x {shape_of(x)}"
        )
        out = mine(x.clone())
        if not any(m.calls for m in (mine.dropout1, mine.dropout, mine.dropout2)):
            fail(
                f"{given}: forward called none of the modules dropout1, dropout and dropout2, "
                "which this check replaces with fixed masks to see where they sit. Call the "
                "modules, as torch's block does (self.dropout1(h)), not F.dropout: a module is "
                "what model.eval(), hooks and a swapped-in layer act on."
            )
        expect_close(out, ref(x).detach(), given=given)


@pytest.mark.parity
def test_masks_match_torch(kata, device):
    """optional: src_mask and src_key_padding_mask are passed to the attention, as torch does

    The masks are the attention's business: hand them over, do not apply them by hand.
    Skipped when forward takes no masks, since the required contract is forward(x).

    Hand src_mask to the attention as its attn_mask and src_key_padding_mask as its
    key_padding_mask, ask for no attention weights and keep only its output; True in a boolean
    mask means "may not attend".
    """
    probe = kata.TransformerEncoderBlock(D, NHEAD, dim_feedforward=FF, dropout=0.0)
    params = inspect.signature(probe.forward).parameters
    open_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    takes = [m for m in ("src_mask", "src_key_padding_mask") if m in params or open_kwargs]
    if not takes:
        pytest.skip("forward takes no masks (optional)")
    seq = 6
    masks = {
        "src_mask": torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=device), diagonal=1),
        "src_key_padding_mask": torch.zeros(3, seq, dtype=torch.bool, device=device),
    }
    masks["src_key_padding_mask"][1, 4:] = True
    masks["src_key_padding_mask"][2, 2:] = True
    cases = [[m] for m in takes] + ([takes] if len(takes) == 2 else [])
    for norm_first in NORM_FIRST:
        mine, ref = block_pair(kata, norm_first)
        mine, ref = mine.to(device).eval(), ref.to(device).eval()
        x = torch.randn(3, seq, D, device=device)
        skip_unless_close(mine(x.clone()), ref(x), "the block's output without masks")
        for names in cases:
            kwargs = {m: masks[m] for m in names}
            shown = ", ".join(
                f"{m}=causal (6, 6) bool" if m == "src_mask" else f"{m}=(3, 6) bool" for m in names
            )
            given = f"{block_name(norm_first)} in eval mode on x {shape_of(x)}, {shown}"
            expect_close(mine(x, **kwargs), ref(x, **kwargs).detach(), given=given)


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your Pre-LN block and nn.TransformerEncoderLayer, in training."""
    d, nhead, ff, batch, seq = (
        (1024, 16, 4096, 16, 512) if device.type == "cuda" else (256, 4, 1024, 8, 128)
    )
    mine, ref = block_pair(kata, True, 0.1, d, nhead, ff)
    mine, ref = mine.to(device), ref.to(device)
    x = torch.randn(batch, seq, d, device=device, requires_grad=True)
    return PerfCase(
        given=f"{block_name(True, 0.1, d, nhead, ff)} on x {shape_of(x)}", mine=lambda: mine(x),
        builtin=lambda: ref(x), builtin_name="nn.TransformerEncoderLayer", inputs=(x,),
    )  # fmt: skip


# -- the references and the setup the checks above use ----------------------------------------


def unit_name(kind, d):
    return f"{kind}({d}, sublayer)"


def norm_of(unit):
    """The wrapper's LayerNorm: its norm attribute, as the contract names it, or else the one
    nn.LayerNorm among its own submodules but the sublayer. Where it is kept is
    test_residual_attributes' to tell; the checks of what the wrapper computes read it anywhere."""
    norm = getattr(unit, "norm", None)
    if isinstance(norm, nn.LayerNorm):
        return norm
    sublayer = getattr(unit, "sublayer", None)
    found = [m for m in unit.children() if isinstance(m, nn.LayerNorm) and m is not sublayer]
    return found[0] if len(found) == 1 else norm


def residual(kata, kind, d, sublayer):
    """The learner's PreNormResidual or PostNormResidual, its norm given random affine values."""
    unit = getattr(kata, kind)(d, sublayer)
    norm = norm_of(unit)
    weight, bias = getattr(norm, "weight", None), getattr(norm, "bias", None)
    if not isinstance(weight, torch.Tensor) or not isinstance(bias, torch.Tensor):
        fail_for(
            "test_residual_attributes",
            f"{unit_name(kind, d)}.norm should be an nn.LayerNorm({d}) with a weight and a bias, "
            f"got {type(norm).__name__ if norm is not None else 'no attribute norm'}.",
        )
    if weight.shape != (d,) or bias.shape != (d,):
        fail_for(
            "test_residual_attributes",
            f"{unit_name(kind, d)}.norm should be an nn.LayerNorm({d}): "
            f"its weight has shape {tuple(weight.shape)}.",
        )
    with torch.no_grad():
        weight.copy_(1 + 0.5 * torch.randn(d))
        bias.copy_(0.5 * torch.randn(d))
    return unit


def layer_norm(x, unit):
    """LayerNorm written out with the unit's own affine values (eps 1e-5, as nn.LayerNorm)."""
    norm = norm_of(unit)
    return F.layer_norm(x, x.shape[-1:], norm.weight, norm.bias, 1e-5)


def pre_norm(x, unit, sublayer):
    return x + sublayer(layer_norm(x, unit))


def post_norm(x, unit, sublayer):
    return layer_norm(x + sublayer(x), unit)


def sublayers(d):
    """Deterministic sublayers to wrap: a Linear and a Linear-ReLU-Linear MLP."""
    return (
        ("nn.Linear", nn.Linear(d, d)),
        ("an MLP", nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))),
    )


def block_name(norm_first, dropout=0.0, d=D, nhead=NHEAD, ff=FF):
    return (
        f"TransformerEncoderBlock({d}, {nhead}, dim_feedforward={ff}, dropout={dropout}, "
        f"norm_first={norm_first})"
    )


def torch_layer(norm_first, dropout=0.0, d=D, nhead=NHEAD, ff=FF):
    """nn.TransformerEncoderLayer with every parameter moved off its initial value.

    LayerNorm weights start at one and biases at zero: shifting them makes a swapped or
    missing parameter show in the output.
    """
    ref = nn.TransformerEncoderLayer(
        d, nhead, dim_feedforward=ff, dropout=dropout, batch_first=True, norm_first=norm_first
    )
    return perturbed(ref)


def own_block(kata, norm_first, dropout=0.0):
    """The learner's block with its own parameters, each moved off its initial value: for the
    checks that compare it with itself, not with torch, so that its submodules' names (which
    block_submodules and state_dict_round_trip judge) do not matter to them."""
    block = kata.TransformerEncoderBlock(
        D, NHEAD, dim_feedforward=FF, dropout=dropout, norm_first=norm_first
    )
    return perturbed(block)


def batch_first_output(out, x, *, given):
    """The block's output for x, detached, which must be shaped like x (batch first): an output
    of another shape is test_output_like_input's mistake."""
    if not isinstance(out, torch.Tensor) or out.shape != x.shape:
        got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        fail_for(
            "test_output_like_input",
            f"{given}: the output has shape {got}, x has shape {tuple(x.shape)}: the block maps "
            "(batch, seq, d_model) to (batch, seq, d_model).",
        )
    return out.detach()


def block_pair(kata, norm_first, dropout=0.0, d=D, nhead=NHEAD, ff=FF):
    """The learner's block and torch's layer, holding the same (random) parameters."""
    ref = torch_layer(norm_first, dropout, d, nhead, ff)
    mine = kata.TransformerEncoderBlock(
        d, nhead, dim_feedforward=ff, dropout=dropout, norm_first=norm_first
    )
    load_torch_state(
        mine, ref, given=block_name(norm_first, dropout, d, nhead, ff), advice=NAMES_ADVICE
    )
    return mine, ref


def _residual_matches(kata, device, kind, formula):
    """kata.<kind> with each of sublayers(8) gives formula(x, unit, sublayer), ranks 2 and 3."""
    for label, sub in sublayers(8):
        for dtype, x_shape in (
            (torch.float32, (4, 8)),
            (torch.float32, (2, 3, 8)),
            (torch.float64, (2, 5, 8)),
        ):
            unit = residual(kata, kind, 8, sub).to(device, dtype)
            x = torch.randn(x_shape, device=device, dtype=dtype) * 3 + 1
            expected = formula(x, unit, unit.sublayer).detach()
            expect_close(unit(x), expected, given=f"{kind}(8, {label}) on x {shape_of(x)}")


def _block_matches_torch(kata, device, norm_first):
    cases = [
        (torch.float32, (D, NHEAD, FF), (2, 5, D)),
        (torch.float32, (D, NHEAD, FF), (3, 1, D)),
        (torch.float32, (12, 3, 24), (1, 7, 12)),
        (torch.float64, (D, NHEAD, FF), (2, 6, D)),
        (torch.float32, (D, NHEAD, FF), (0, 5, D)),  # an empty batch, where torch supports it
    ]
    # Eval mode, then training: with dropout=0.0 training is deterministic too, and a dropout
    # rate that is not the block's own (F.dropout(x, 0.1, self.training)) shows only there.
    for training in (False, True):
        mode = "in training" if training else "in eval mode"
        for dtype, (d, nhead, ff), x_shape in cases:
            mine, ref = block_pair(kata, norm_first, 0.0, d, nhead, ff)
            mine, ref = (
                mine.to(device, dtype).train(training),
                ref.to(device, dtype).train(training),
            )
            x = torch.randn(x_shape, device=device, dtype=dtype)
            try:
                expected = ref(x).detach()
            except Exception:
                continue  # this torch version cannot run the case itself: nothing to compare with
            given = f"{block_name(norm_first, 0.0, d, nhead, ff)} {mode} on x {shape_of(x)}"
            expect_close(mine(x), expected, given=given)
