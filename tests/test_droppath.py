"""Hidden checks for the DropPath kata, against timm's DropPath semantics.

DropPath is random, so "matches timm" means: in training every sample (dim 0) is either all
zeros (dropped) or x / (1 - p) (kept; x when scale_by_keep is False), the kept fraction of
samples is 1 - p within 6σ, and eval mode is the identity. Inputs have no zeros (|x| in
[0.5, 1.5)), so a zero in the output always means a drop. Interview core first, then torch
parity (@pytest.mark.parity): the dtype policy, float64 computed in float64 and half precision.

Each core property in every mode and call form where it applies (DropPath's forward must call
drop_path, so the module covers the function's arithmetic where only one form is checked):

    property                       DropPath(p) module                 drop_path(x, p, training)
    identity: eval, p = 0          eval_is_identity                   eval_is_identity (defaults)
    whole samples, x / (1 - p)     whole_sample_dropped, survivors_.. survivors_scaled, forward_..
    scale_by_keep=False            no_scaling_without_scale_by_keep   no_scaling_without_scale_..
    kept fraction 1 - p            keep_fraction                      (the module's draw)
    p = 1 gives zeros, no NaN      drop_prob_one_gives_zeros          (the module's arithmetic)
    gradient mask / (1 - p)        gradient                           (the module's arithmetic)
    input left unmodified          input_unmodified (train, eval)     input_unmodified (both)

The checks of the draw (per sample, fresh each call, the kept fraction) read which values were
kept from y != 0 and leave their scale to survivors_scaled; those of the scale read the values
that survive, whatever the mask's shape, which is whole_sample_dropped's to tell.
"""

import pytest
import torch

from norm_katas.checks import (
    BUILTIN_DROPOUT_MODULES,
    BUILTIN_DROPOUTS,
    TOLERANCE,
    PerfCase,
    Suite,
    built_with_attributes,
    expect_close,
    expect_float64_arithmetic,
    expect_follows_device,
    expect_follows_torch_seed,
    expect_from_scratch,
    expect_grads_close,
    expect_keep_fraction,
    expect_like,
    expect_registered_state,
    expect_scale_in_float64,
    expect_tensor,
    expect_vectorized,
    fail,
    fail_for,
    nonzero_values,
    shape_of,
)

SUITE = Suite()


def test_attributes(kata):
    """drop_prob and scale_by_keep are stored as attributes, with timm's defaults; no state

    Code that schedules stochastic depth reads and sets module.drop_prob; DropPath learns
    nothing, so it has no parameters and an empty state_dict.

    Store drop_prob and scale_by_keep on the module under those names, with defaults 0.0 and True,
    as plain Python values; register no parameter and no buffer.
    """
    cases = [
        ((), {}, {"drop_prob": 0.0, "scale_by_keep": True}),
        ((0.2,), {}, {"drop_prob": 0.2, "scale_by_keep": True}),
        ((0.3, False), {}, {"drop_prob": 0.3, "scale_by_keep": False}),
        (
            (),
            {"drop_prob": 0.1, "scale_by_keep": False},
            {"drop_prob": 0.1, "scale_by_keep": False},
        ),
    ]
    for mine, given in built_with_attributes(kata.DropPath, "DropPath", cases):
        if list(mine.parameters()) or mine.state_dict():
            fail(
                f"{given} should hold no parameters or buffers; its state_dict has "
                f"{sorted(mine.state_dict())}."
            )


def test_output_like_input(kata, device):
    """output has the input's shape, dtype and device, for inputs of rank 1 to 5

    DropPath zeroes whole samples, it does not remove them: the output lines up with the input.

    y = x * mask with a mask of shape (N, 1, ..., 1), which broadcasts over the rest.
    """
    for dtype in (torch.float32, torch.float64):
        for shape in ((8,), (4, 8), (4, 3, 8), (2, 3, 4, 5), (2, 2, 3, 4, 2)):
            x = nonzero_values(*shape, device=device, dtype=dtype)
            expect_like(
                kata.DropPath(0.5).to(device)(x.clone()),
                x,
                given=f"DropPath(0.5) on x {shape_of(x)}",
            )
            expect_like(
                kata.drop_path(x.clone(), 0.5, True),
                x,
                given=f"drop_path(x, 0.5, training=True) on x {shape_of(x)}",
            )


def test_input_unmodified(kata, device):
    """the input tensor is left unmodified

    In-place operations on x change the caller's tensor, the residual branch's output that the
    block is about to add.

    Compute into a new tensor: the product of x and the per-sample mask, leaving x as it was.
    """
    for training in (True, False):
        x = nonzero_values(8, 16, device=device)
        before = x.clone()
        kata.DropPath(0.5).to(device).train(training)(x)
        kata.drop_path(x, 0.5, training)
        if not torch.equal(x, before):
            mode = "training" if training else "eval mode"
            fail(f"DropPath(0.5) in {mode} changed its input x; it must not.")


def test_from_scratch(kata, device):
    """implemented from tensor operations, not a built-in dropout

    The exercise is the per-sample mask: F.dropout and nn.Dropout are off limits here.

    torch.rand, comparisons, bernoulli and multiplication are all you need.
    """
    mine = kata.DropPath(0.5).to(device)
    x = nonzero_values(8, 16, device=device)
    expect_from_scratch(
        lambda: mine(x), FORBIDDEN, module=mine, forbidden_modules=BUILTIN_DROPOUT_MODULES
    )
    expect_from_scratch(lambda: kata.drop_path(x, 0.5, True), FORBIDDEN)


def test_vectorized(kata, device):
    """vectorized: no Python loop over the samples

    One random draw of shape (N, 1, ..., 1) decides for every sample at once.

    One uniform draw u per sample, shaped (N, 1, ..., 1) to broadcast: y = x · [u < keep_prob] /
    keep_prob, all samples at once.
    """
    mine = kata.DropPath(0.5).to(device)
    xs, xl = nonzero_values(2, 8, device=device), nonzero_values(128, 32, device=device)
    expect_vectorized(mine, xs, xl, given="DropPath(0.5)")


def test_eval_is_identity(kata, device):
    """eval mode (training=False) and drop_prob = 0 are the identity, with no rescaling

    At inference every residual branch is used; the training-time 1 / (1 - p) already made
    the expected output equal to x. With drop_prob = 0 nothing is dropped and 1 / (1 - 0) = 1.
    drop_path's defaults are timm's: drop_prob=0.0 and training=False.

    When not training, or when drop_prob is 0, hand back x unchanged.
    """
    for p in (0.3, 0.9, 1.0):
        x = nonzero_values(8, 16, device=device)
        mine = kata.DropPath(p).to(device).eval()
        expect_close(
            mine(x), x, given=f"{drop_path_call(p)} in eval mode on x {shape_of(x)}", rtol=0, atol=0
        )
        expect_close(
            kata.drop_path(x, p, False),
            x,
            given=f"drop_path(x, {p}, training=False) on x {shape_of(x)}",
            rtol=0,
            atol=0,
        )
        expect_close(
            kata.drop_path(x),
            x,
            given=f"drop_path(x) (the defaults) on x {shape_of(x)}",
            rtol=0,
            atol=0,
        )
        expect_close(
            kata.drop_path(x, p),
            x,
            given=f"drop_path(x, {p}) (training defaults to False) on x {shape_of(x)}",
            rtol=0,
            atol=0,
        )
        # Without scale_by_keep too: the original stochastic depth scaled by 1 - p at test
        # time instead; with the scale in training or none at all, eval is the identity.
        mine = kata.DropPath(p, scale_by_keep=False).to(device).eval()
        given = f"DropPath({p}, scale_by_keep=False) in eval mode on x {shape_of(x)}"
        expect_close(mine(x), x, given=given, rtol=0, atol=0)
        given = f"drop_path(x, {p}, training=False, scale_by_keep=False) on x {shape_of(x)}"
        out = kata.drop_path(x, p, False, scale_by_keep=False)
        expect_close(out, x, given=given, rtol=0, atol=0)
    # drop_prob defaults to 0: training with it drops nothing and scales by 1 / (1 - 0) = 1.
    x = nonzero_values(8, 16, device=device)
    expect_close(
        kata.drop_path(x, training=True),
        x,
        given=f"drop_path(x, training=True) (drop_prob defaults to 0.0) on x {shape_of(x)}",
        rtol=0,
        atol=0,
    )
    expect_close(
        kata.DropPath().to(device)(x),
        x,
        given=f"DropPath() (drop_prob defaults to 0.0) in training on x {shape_of(x)}",
        rtol=0,
        atol=0,
    )


def test_whole_sample_dropped(kata, device):
    """each sample is kept or dropped as a whole: one draw per sample, not per element

    DropPath removes a sample's entire residual branch; a draw per element is Dropout.

    A mask of shape (N, 1, ..., 1), broadcast over the sample's other dims.
    """
    for shape in ((64, 16), (32, 3, 8), (16, 2, 4, 4)):
        x = nonzero_values(*shape, device=device)
        given = f"DropPath(0.5) in training on x {shape_of(x)}"
        kept_samples(kata.DropPath(0.5).to(device)(x.clone()), x, 0.5, given=given, own=True)


def test_draws_per_sample_not_per_batch(kata, device):
    """every sample draws on its own, not the whole batch at once

    A mask of shape (1, ...) makes the whole batch share one draw: every sample then skips
    the block together, and the regularizing noise across samples is gone.

    The mask has N entries, one per sample, shaped (N, 1, ..., 1) to broadcast over each sample's
    other dims.
    """
    x = nonzero_values(256, 4, device=device)
    given = f"DropPath(0.5) in training on x {shape_of(x)}"
    kept = survivors(kata.DropPath(0.5).to(device)(x.clone()), x, None, given=given)
    # 256 independent draws at p = 0.5 agree with probability 2^-255 (and 1024 per element, the
    # mask test_whole_sample_dropped rejects, with 2^-1023).
    if kept.all() or not kept.any():
        out = expect_tensor(kata.DropPath(0.5).to(device)(x.clone())).detach()
        if kept.all() and out.shape == x.shape and torch.equal(out, x):
            # Not one draw for all: no draw at all, the identity of eval mode.
            fail_for(
                "test_keep_fraction",
                f"{given}: the output is x itself, every sample kept and none scaled, as in "
                "eval mode: in training (self.training) each sample is dropped with "
                "probability drop_prob.",
            )
        what = "kept" if kept.all() else "dropped"
        fail(f"{given}: all 256 samples were {what} together; each sample needs its own draw.")


def test_keep_fraction(kata, device):
    """about a fraction 1 - drop_prob of the samples survive (within 6σ on 40,000 samples)

    drop_prob is the probability of dropping a sample, so each survives with 1 - drop_prob.

    Keep a sample where u < 1 - p, u uniform on [0, 1): on n samples the kept fraction is 1 - p ±
    √(p(1 - p)/n).
    """
    n = 40_000
    for p in (0.1, 0.5, 0.8):
        # Samples of one value each: a draw per sample and a draw per element (the mask
        # test_whole_sample_dropped rejects) keep the same fraction of them.
        x = torch.ones(n, 1, device=device)
        given = f"{drop_path_call(p)} in training on {n:,} samples of ones"
        out = shaped_like(kata.DropPath(p).to(device)(x.clone()), x, given=given)
        # Survivors only: how they are scaled is test_survivors_scaled's business.
        kept = (out.detach() != 0).flatten().cpu()
        if kept.all() and torch.equal(out.detach(), x):
            fail(
                f"{given}: the output is x itself, every sample kept and none scaled, as in "
                "eval mode: in training (self.training) each sample is dropped with "
                "probability drop_prob."
            )
        if kept.all() or not kept.any():  # 40,000 independent draws never agree
            what = "kept" if kept.all() else "dropped"
            fail_for(
                "test_draws_per_sample_not_per_batch",
                f"{given}: all {n:,} samples were {what} together, one draw for the whole batch; "
                "each sample needs its own draw, and then a fraction 1 - p of them is kept.",
            )
        expect_keep_fraction(kept, p, given=given, what="samples", digits=3)


def test_survivors_scaled(kata, device):
    """kept samples are scaled by exactly 1 / (1 - drop_prob), for every drop_prob

    Scaling by the keep probability keeps the expected branch output equal to x, so the
    residual stream has the same scale in training and at inference.

    E[y] = (1 - p) · x / (1 - p) = x: divide by keep_prob = 1 - drop_prob, not by drop_prob.
    """
    for p in (0.1, 0.25, 0.6):
        x = nonzero_values(64, 8, device=device, dtype=torch.float64)
        given = f"{drop_path_call(p)} in training on x {shape_of(x)}"
        mine = kata.DropPath(p).to(device)
        out = some_survive(lambda mine=mine, x=x: mine(x.clone()), given=given, p=p)
        survivors(out, x, 1 / (1 - p), given=given)
        given = f"drop_path(x, {p}, training=True) on x {shape_of(x)}"
        survivors(kata.drop_path(x.clone(), p, True), x, 1 / (1 - p), given=given)


def test_no_scaling_without_scale_by_keep(kata, device):
    """scale_by_keep=False leaves the kept samples unscaled

    The original stochastic depth kept survivors as they are (and rescaled at test time); timm's
    DropPath does the same when scale_by_keep is False.

    Divide by keep_prob only when scale_by_keep is True.
    """
    p = 0.3
    x = nonzero_values(64, 8, device=device, dtype=torch.float64)
    given = f"{drop_path_call(p, False)} in training on x {shape_of(x)}"
    mine = kata.DropPath(p, False).to(device)
    survivors(some_survive(lambda: mine(x.clone()), given=given, p=p), x, 1.0, given=given)
    out = kata.drop_path(x.clone(), p, True, scale_by_keep=False)
    given = f"drop_path(x, {p}, training=True, scale_by_keep=False) on x {shape_of(x)}"
    survivors(out, x, 1.0, given=given)


def test_gradient(kata, device):
    """the gradient flows through the output's own mask and scale: dy/dx = y / x

    Build the output from x with differentiable operations; a dropped sample then gets no gradient,
    and a kept one gets grad_out times the factor its output was scaled by, 1 / (1 - p).

    dy/dx = mask / keep_prob, the mask of that forward call: for each element, the factor y / x
    that forward applied to it.
    """
    p = 0.4
    x = nonzero_values(32, 6, device=device, dtype=torch.float64).requires_grad_()
    given = f"{drop_path_call(p)} in training on x {shape_of(x)}"
    out = shaped_like(kata.DropPath(p).to(device)(x.clone()), x, given=given)
    if not out.requires_grad:
        fail(f"{given}: the output does not require grad although x does.")
    # The factor this forward call applied to each element, whatever its mask and scale (those
    # are test_whole_sample_dropped's and test_survivors_scaled's): the gradient must be it.
    factor = (out.detach() / x.detach()).to(x.dtype)
    grad_out = torch.randn_like(x)
    out.backward(grad_out)
    given = f"{given}, against grad_out · y / x, the factor this forward call applied"
    expect_grads_close({"input": x.grad}, {"input": grad_out * factor}, given=given)


def test_drop_prob_one_gives_zeros(kata, device):
    """drop_prob = 1 drops every sample: all zeros, no NaN, in the output and the gradient

    With p = 1 the keep probability is 0, and scaling by 1 / 0 gives inf; 0 · inf = NaN.

    Scale only when keep_prob > 0 (timm: if keep_prob > 0.0 and scale_by_keep).
    """
    x = nonzero_values(8, 4, device=device, dtype=torch.float64).requires_grad_()
    given = f"DropPath(1.0) in training on x {shape_of(x)}"
    out = shaped_like(kata.DropPath(1.0).to(device)(x.clone()), x, given=given)
    if (out.detach() != 0).all():
        turned_around(kata, device, given)
    expect_close(out, torch.zeros_like(x), given=given, rtol=0, atol=0)
    if not out.requires_grad:
        fail_for("test_gradient", f"{given}: the output does not require grad although x does.")
    out.backward(torch.randn_like(x))
    expect_grads_close({"input": x.grad}, {"input": torch.zeros_like(x)}, given=given)


def turned_around(kata, device, given):
    """DropPath(1.0) kept every sample: if DropPath(0.9) keeps about 90% of them, the keep
    probability is drop_prob itself, test_keep_fraction's mistake, met here at p = 1."""
    n = 4_000
    x = torch.ones(n, 1, device=device)
    out = expect_tensor(kata.DropPath(0.9).to(device)(x.clone()))
    if out.shape != x.shape:
        return
    kept = (out.detach() != 0).double().mean().item()
    if abs(kept - 0.9) < 6 * (0.09 / n) ** 0.5:  # within 6σ of 0.9: about 90% kept
        fail_for(
            "test_keep_fraction",
            f"{given}: every sample was kept, and DropPath(0.9) keeps {kept:.1%} of {n:,} "
            "samples: a sample is kept with probability drop_prob, where it should be dropped "
            "with it.",
        )


def test_fresh_draw_each_call(kata, device):
    """a fresh random draw on every forward call

    Each training step drops a new random set of samples' branches; a mask drawn once and
    reused drops the same ones forever.

    Draw the mask inside forward, every time.
    """
    mine = kata.DropPath(0.5).to(device)
    x = nonzero_values(128, 4, device=device)
    given = f"DropPath(0.5) called twice on the same x {shape_of(x)}"
    first = survivors(mine(x.clone()), x, None, given=given)
    second = survivors(mine(x.clone()), x, None, given=given)
    if torch.equal(first, second):  # two draws of 128 agree with probability 2^-128
        fail(f"{given}: both calls dropped exactly the same samples. Draw a new mask per call.")


def test_follows_torch_seed(kata, device):
    """the mask comes from torch's random generator: torch.manual_seed reproduces it

    Seeding torch must make a training run repeatable; a mask drawn with Python's random
    module or numpy ignores torch.manual_seed and is made on the host.

    Make the per-sample draw with torch's generator on x's device, as a uniform draw of shape (N, 1,
    ..., 1) or a Bernoulli draw of the keep probability.
    """
    mine = kata.DropPath(0.5).to(device)
    x = nonzero_values(64, 4, device=device)
    expect_follows_torch_seed(
        lambda: mine(x.clone()), given=f"DropPath(0.5) in training on x {shape_of(x)}"
    )


def test_to_dtype(kata, device):
    """after .to(torch.float64) the module holds no float32 tensor

    DropPath has no parameters or buffers; a mask or scale kept as a tensor attribute is not
    moved by .to() and stays float32 on the CPU.

    Keep drop_prob a Python float and build the mask from x inside forward.
    """
    mine = kata.DropPath(0.1).to(device, torch.float64)
    expect_registered_state(mine, dtype=torch.float64, given="DropPath(0.1).to(float64)")


def test_follows_device(kata, device):
    """runs on CUDA: the mask is created on the input's device

    A random tensor made without a device lives on the CPU, whatever x's device is, and
    cannot be multiplied with a CUDA x.

    Create the (N, 1, ..., 1) draw on x's device, or derive it from x; a random tensor created from
    a shape alone lands on the CPU.
    """
    expect_follows_device(
        kata.DropPath(0.5), nonzero_values(8, 4, device="cpu"), device=device, given="DropPath(0.5)"
    )


@pytest.mark.broad
def test_forward_matches_timm(kata, device):
    """forward follows timm's DropPath on ranks 2 to 5, float32 and float64, both call forms

    In training every sample is dropped whole or kept and scaled; in eval the output equals
    the input.

    y = x * mask / (1 - p) with mask ~ Bernoulli(1 - p) of shape (N, 1, ..., 1).
    """
    for dtype in (torch.float32, torch.float64):
        for shape in ((16, 8), (8, 3, 8), (8, 2, 4, 5), (4, 2, 3, 4, 2)):
            x = nonzero_values(*shape, device=device, dtype=dtype)
            mine = kata.DropPath(0.5).to(device)
            kept_samples(mine(x.clone()), x, 0.5, given=f"DropPath(0.5) on x {shape_of(x)}")
            given = f"drop_path(x, 0.5, training=True) on x {shape_of(x)}"
            kept_samples(kata.drop_path(x.clone(), 0.5, True), x, 0.5, given=given)
            expect_close(mine.eval()(x), x, given=f"DropPath(0.5) in eval mode on x {shape_of(x)}")


@pytest.mark.parity
def test_computes_in_float64(kata, device):
    """a float64 input is computed in float64, as timm's DropPath does, not through float32

    A scale applied to an upcast copy of x, or a float32 tensor that x is rounded through, loses
    what float64 holds beyond float32's 7 significant digits.

    Build the mask in x's dtype (a Bernoulli draw of the keep probability into a tensor like x, of
    shape (N, 1, ..., 1)) and multiply x by it.
    """
    mine = kata.DropPath(0.1).to(device, torch.float64)
    x = nonzero_values(64, 8, device=device, dtype=torch.float64)
    # The same seed for every run: the same samples dropped, so only the arithmetic differs,
    # and only the samples that survive it are read (the probe needs half of what it reads to
    # move), however many the learner's draw keeps.
    torch.manual_seed(7)
    out = expect_tensor(mine(x.clone()))
    rows = (out.detach() != 0).reshape(out.shape[0], -1).any(1) if out.shape == x.shape else None
    if rows is None or not rows.any():
        rows = slice(None)  # nothing to choose from: another check says what is wrong
    expect_float64_arithmetic(
        lambda v: (torch.manual_seed(7), mine(v))[1][rows],
        x,
        given=f"DropPath(0.1) on x {shape_of(x)}, the samples it keeps",
    )
    expect_scale_in_float64(out, x, 0.1, given=f"DropPath(0.1) on x {shape_of(x)}")


@pytest.mark.parity
def test_non_contiguous_input(kata, device):
    """non-contiguous inputs (transposed, sliced) are dropped like any other, as timm's are

    A transposed or sliced tensor shares its base's memory, out of row order: timm's DropPath
    and torch's layers take it as it is. Flattening it with view, which only relabels memory
    already in order, raises on such a tensor.

    Broadcast the (N, 1, ..., 1) mask over x, which works for any layout; where x must be
    flattened, reshape copies only when it has to.
    """
    base = nonzero_values(8, 6, 5, device=device)
    for x, how in ((base.transpose(1, 2), "x.transpose(1, 2)"), (base[:, ::2], "x[:, ::2]")):
        # Each kept value where x's is, in x's layout; which are kept, and by how much they
        # are scaled, are the core's to tell.
        given = f"DropPath(0.5) in training on {how}, a non-contiguous {shape_of(x)} view"
        survivors(kata.DropPath(0.5).to(device)(x), x, None, given=given)
        given = f"drop_path(x, 0.5, training=True) on {how}, a non-contiguous {shape_of(x)} view"
        survivors(kata.drop_path(x, 0.5, True), x, None, given=given)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_half_precision(kata, device, dtype):
    """half-precision inputs keep their dtype: the mask follows x's dtype

    A mask made as float32 promotes a float16 product to float32, changing the dtype of the
    residual stream.

    Build the mask in x's dtype, or cast it to x's dtype before multiplying.
    """
    p = 0.25
    x = nonzero_values(32, 8, device=device, dtype=dtype)
    given = f"{drop_path_call(p)} in training on x {shape_of(x)}"
    # x / (1 - p) rounds differently in half precision depending on the order of operations.
    out = kata.DropPath(p).to(device)(x.clone())
    survivors(out, x, None, given=given, rtol=2e-2, atol=2e-2)


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your DropPath and the same mask built with F.dropout (torch has no
    DropPath of its own), in training, on a residual branch's output."""
    import torch.nn.functional as F

    shape = (256, 197, 768) if device.type == "cuda" else (64, 197, 384)
    mine = kata.DropPath(0.1).to(device)
    x = torch.randn(shape, device=device, requires_grad=True)
    ones = torch.ones((shape[0], 1, 1), device=device)
    return PerfCase(
        given=f"DropPath(0.1) in training on x {shape_of(x)}", mine=lambda: mine(x),
        builtin=lambda: x * F.dropout(ones, 0.1), builtin_name="x · F.dropout(ones(N, 1, 1))",
        inputs=(x,), bytes_moved=2 * x.nbytes,
    )  # fmt: skip


# -- helpers the checks above share ---------------------------------------------------------


FORBIDDEN = BUILTIN_DROPOUTS | {"stochastic_depth"}


def drop_path_call(p, scale_by_keep=True):
    return f"DropPath({p})" if scale_by_keep else f"DropPath({p}, scale_by_keep=False)"


def shaped_like(out, x, *, given):
    """out, which must have x's shape, dtype and device: an output of another shape is
    test_output_like_input's mistake, and no check of the values can read it."""
    out = expect_tensor(out)
    if out.shape != x.shape:
        fail_for(
            "test_output_like_input",
            f"{given}: the output has shape {tuple(out.shape)}, x has shape {tuple(x.shape)}; "
            "DropPath zeroes whole samples rather than removing them, so its output lines up "
            "with x.",
        )
    return expect_like(out, x, given=given)


def kept_samples(out, x, p, *, given, scale=True, own=False, rtol=None, atol=None):
    """Each sample of out is all zeros or x / (1 - p) (x when not scaling); returns the (N,) kept
    mask on the CPU. own: x times the learner's own factor, any one for every kept sample, for
    the checks of the drop pattern (the scale is test_survivors_scaled's). The checks hand the
    layer a copy of x, so that x is as it was here, whether or not the layer writes into its
    input (test_input_unmodified's to tell)."""
    out = shaped_like(out, x, given=given)
    got = out.detach().double().cpu().reshape(x.shape[0], -1)
    xs = x.detach().double().cpu().reshape(x.shape[0], -1)
    factor = 1 / (1 - p) if scale and p < 1 else 1.0
    if own and (nonzero := got != 0).any():
        factor = (got[nonzero] / xs[nonzero]).median().item()
    default_rtol, default_atol = TOLERANCE[x.dtype]
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    dropped = (got == 0).all(1)
    kept = torch.isclose(got, xs * factor, rtol=rtol, atol=atol).all(1)
    bad = ~(dropped | kept)
    if bad.any():
        n = int(bad.nonzero()[0])
        zeros = int((got[n] == 0).sum())
        ratio = got[n] / xs[n]
        expect = "x / (1 - p)" if scale and not own else "x · one factor" if own else "x itself"
        many = f"{int(bad.sum())} of {x.shape[0]} samples are like that."
        if zeros == 0 and torch.isclose(ratio, ratio[:1].expand_as(ratio), rtol, atol).all():
            fail(
                f"{given}: sample {n} is kept whole, but as x · {ratio[0].item():.6g}, where "
                f"{expect} = x · {factor:.6g} is expected. {many}"
            )
        if 0 < zeros < got.shape[1]:
            why = f"{zeros} of its {got.shape[1]} values are 0 and the rest are not"
        else:
            i = int((~torch.isclose(got[n], xs[n] * factor, rtol=rtol, atol=atol)).nonzero()[0])
            why = f"value {i} is {got[n, i].item():.6g} for x = {xs[n, i].item():.6g}"
        fail(
            f"{given}: sample {n} is neither dropped whole (all zeros) nor kept whole "
            f"({expect}): {why}. {many}"
        )
    return kept


def survivors(out, x, factor, *, given, rtol=None, atol=None):
    """The elements out kept, read from out != 0 (x has no zeros), as a boolean tensor of x's
    shape on the CPU, each of them x · factor. Whether the zeros cover whole samples is
    test_whole_sample_dropped's to tell, and the checks that read survivors judge the draw or the
    scale whatever the mask's shape. factor None: the learner's own, any one factor for all the
    kept elements, where a check judges the draw and the scale is test_survivors_scaled's."""
    out = shaped_like(out, x, given=given)
    got, xs = out.detach().double().cpu(), x.detach().double().cpu()
    kept = got != 0
    if not kept.any():
        return kept
    own = factor is None
    if own:
        factor = (got[kept] / xs[kept]).median().item()
    default_rtol, default_atol = TOLERANCE[x.dtype]
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    bad = kept & ~torch.isclose(got, xs * factor, rtol=rtol, atol=atol)
    if bad.any():
        i = tuple(int(k) for k in bad.nonzero()[0])
        said = (
            f"where most kept values are x · {factor:.6g}: the kept values are not one scaled "
            "copy of x"
            if own
            else f"expected 0 (dropped) or x · {factor:.6g} (kept)"
        )
        message = (
            f"{given}: output element {list(i)} is {got[i].item():.6g} for x = "
            f"{xs[i].item():.6g}, {said}. {int(bad.sum())} of {bad.numel()} values are neither "
            f"(rtol={rtol:g}, atol={atol:g})."
        )
        if own:
            fail_for("test_survivors_scaled", message)
        fail(message)
    return kept


def some_survive(run, *, given, p):
    """run()'s output, drawn again (up to 20 calls) until some value survives: a check of the
    survivors' scale judges whatever survives, and a batch that shares one draw (which
    test_draws_per_sample_not_per_batch tells) keeps them all only some of the time."""
    for _ in range(20):
        out = run()
        if (expect_tensor(out).detach() != 0).any():
            return out
    fail(f"{given}: every sample was dropped in each of 20 calls; at p = {p} most should survive.")
