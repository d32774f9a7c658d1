"""Hidden checks for the Dropout kata, each compared with torch.nn.Dropout.

Dropout is random, so "matches torch" means: every output element is either 0 (dropped) or
x / (1 - p) (kept), the kept fraction is 1 - p within 6σ, and eval mode is the identity.
Inputs have no zeros (|x| in [0.5, 1.5)), so a zero in the output always means a drop: the
checks of the drop pattern (which elements, how many, a fresh draw) read it from y != 0 and
leave the value of the kept elements, x / (1 - p), to test_kept_values_scaled.

Interview core first, then torch parity (@pytest.mark.parity): torch's check of p and its
message, inplace=True, and half-precision inputs.
"""

import pytest
import torch
from torch import nn

from norm_katas.checks import (
    BUILTIN_DROPOUT_MODULES,
    BUILTIN_DROPOUTS,
    TOLERANCE,
    PerfCase,
    Suite,
    built_with_attributes,
    expect_close,
    expect_follows_device,
    expect_follows_torch_seed,
    expect_from_scratch,
    expect_grads_close,
    expect_keep_fraction,
    expect_like,
    expect_raises,
    expect_registered_state,
    expect_scale_in_float64,
    expect_state_dict_round_trip,
    expect_tensor,
    expect_vectorized,
    fail,
    fail_for,
    nonzero_values,
    shape_of,
)

SUITE = Suite()


def test_attributes(kata):
    """p and inplace are stored as attributes, with torch's defaults; no parameters

    Code that tunes dropout reads and sets module.p, the probability of dropping; Dropout
    learns nothing, so it has no parameters.

    Store p and inplace on the module under those names, with defaults 0.5 and False, as plain
    Python values; nothing is registered as a parameter.
    """
    cases = [
        ((), {}, {"p": 0.5, "inplace": False}),
        ((0.2,), {}, {"p": 0.2, "inplace": False}),
        ((0.3, True), {}, {"p": 0.3, "inplace": True}),
        ((), {"p": 0.7, "inplace": True}, {"p": 0.7, "inplace": True}),
    ]
    for mine, given in built_with_attributes(kata.Dropout, "Dropout", cases):
        if list(mine.parameters()):
            names = sorted(n for n, _ in mine.named_parameters())
            fail(f"{given} should have no parameters, got {names}.")


def test_state_dict_round_trip(kata):
    """state_dict is empty, like nn.Dropout's, and loads both ways

    Dropout has no learned state: a mask or a scale kept in a buffer would end up in every
    checkpoint and break loading into nn.Dropout.

    No nn.Parameter and no register_buffer: p and inplace are plain Python attributes.
    """
    for p, inplace in ((0.5, False), (0.3, True)):
        mine, ref = kata.Dropout(p, inplace=inplace), nn.Dropout(p, inplace=inplace)
        expect_state_dict_round_trip(mine, ref, given=dropout_call(p, inplace))


def test_output_like_input(kata, device):
    """output has the input's shape, dtype and device

    Dropout zeroes elements, it does not remove them: the output lines up with the input.

    y = x * mask with a mask of x's shape, not x[mask], which keeps only the survivors.
    """
    for dtype in (torch.float32, torch.float64):
        x = nonzero_values(3, 5, 8, device=device, dtype=dtype)
        out = _run_on_copy(kata.Dropout(0.5).to(device), x)
        expect_like(out, x, given=f"Dropout(0.5) in training on x {shape_of(x)}")


def test_input_unmodified(kata, device):
    """the input tensor is left unmodified when inplace=False

    In-place operations on x (a method whose name ends in an underscore, or assigning into x through
    a mask) change the caller's tensor; they are for an in-place layer only.

    Compute into a new tensor: the product of x and the scaled mask, leaving x as it was.
    """
    for p, training in ((0.5, True), (0.5, False), (1.0, True)):
        try:
            mine = kata.Dropout(p).to(device).train(training)
        except ValueError:
            if p < 1:
                raise
            continue  # refusing p = 1 is for test_p_one_gives_zeros to tell
        x = nonzero_values(4, 8, device=device)
        before = x.clone()
        mine(x)
        if not torch.equal(x, before):
            mode = "training" if training else "eval mode"
            fail(f"Dropout({p}) in {mode} changed its input x; with inplace=False it must not.")


def test_from_scratch(kata, device):
    """implemented from tensor operations, not the built-in dropout

    The exercise is the mask: F.dropout, torch.dropout, nn.Dropout and the other built-in
    dropouts are off limits here.

    rand_like, bernoulli, comparisons, where and multiplication are fine.
    """
    mine = kata.Dropout(0.5).to(device)
    x = nonzero_values(4, 8, device=device)
    expect_from_scratch(
        lambda: mine(x), BUILTIN_DROPOUTS, module=mine, forbidden_modules=BUILTIN_DROPOUT_MODULES
    )


def test_vectorized(kata, device):
    """vectorized: no Python loop over rows or elements

    One random draw of x's whole shape gives every element its own number at once.

    One uniform draw u per element, all at once: y = x · [u ≥ p] / (1 − p).
    """
    mine = kata.Dropout(0.5).to(device)
    xs, xl = nonzero_values(2, 16, device=device), nonzero_values(32, 64, device=device)
    expect_vectorized(mine, xs, xl, given="Dropout(0.5)")


def test_p_zero_is_identity(kata, device):
    """p = 0 in training keeps every element and returns the input's values

    p = 0 and p = 1 are valid probabilities; only values outside [0, 1] raise.

    Nothing is dropped and 1 / (1 - 0) = 1, so y = x.
    """
    for dtype in (torch.float32, torch.float64):
        x = nonzero_values(16, 64, device=device, dtype=dtype)
        given = f"Dropout(0.0) in training on x {shape_of(x)}"
        mine = kata.Dropout(0.0).to(device)
        # Exact in float32; float64 at float32's tolerance, since a layer may compute a float64
        # input in float32 (dtype policy, not this check's business).
        exact = {"rtol": 0, "atol": 0} if dtype == torch.float32 else {}
        expect_close(_run_on_copy(mine, x), x, given=given, **exact)


def test_p_one_gives_zeros(kata, device):
    """p = 1 drops everything: all zeros, no NaN, in the output and in the gradient

    With p = 1 the scale 1 / (1 - p) is infinite and 0 · inf = NaN, so it must never be computed;
    selecting between x / (1 - p) and 0 with a where looks fine, but its gradient is NaN.

    At p = 1 the output is x times zero: every element is 0, and the output stays connected to x, so
    its gradient is 0 too.
    """
    x = nonzero_values(4, 8, device=device, dtype=torch.float64).requires_grad_()
    given = f"Dropout(1.0) in training on x {shape_of(x)}"
    out = _shaped_like(_run_on_copy(kata.Dropout(1.0).to(device), x), x, given=given)
    expect_close(out, torch.zeros_like(x), given=given, rtol=0, atol=0)
    if not out.requires_grad:
        other = _run_on_copy(kata.Dropout(0.5).to(device), x)
        if isinstance(other, torch.Tensor) and not other.requires_grad:  # not p = 1's alone
            fail_for(
                "test_gradients_match",
                f"{given}: the output does not require grad although x does, nor does "
                "Dropout(0.5)'s: keep the output in autograd's graph.",
            )
    _backward(out, torch.randn_like(x), given=given)
    expect_grads_close({"input": x.grad}, {"input": torch.zeros_like(x)}, given=given)


def test_eval_is_identity(kata, device):
    """eval mode is the identity, for every p, with no rescaling

    The training-time 1 / (1 - p) already keeps the expected output equal to x, so in eval mode
    nothing is dropped and nothing is scaled.

    When the module is not training, hand back the input unchanged (torch returns the input tensor
    itself).
    """
    for p in (0.3, 0.9, 1.0):
        for inplace in (False, True):
            try:
                mine = kata.Dropout(p, inplace=inplace).to(device)
            except ValueError:
                if p < 1:
                    raise
                continue  # refusing p = 1 is for test_p_one_gives_zeros to tell
            mine.eval()
            x = nonzero_values(4, 8, device=device)
            before = x.clone()
            given = f"{dropout_call(p, inplace)} in eval mode on x {shape_of(x)}"
            expect_close(mine(x), before, given=given, rtol=0, atol=0)
            if not torch.equal(x, before):
                fail(f"{given}: x was changed; eval mode must leave it as it is.")


def test_kept_values_scaled(kata, device):
    """kept values are scaled by exactly 1 / (1 - p) in training, for every p

    Inverted dropout scales the survivors up so that the expected output equals x; the
    factor depends on p, it is not a constant 2.

    E[y] = (1 - p) · x / (1 - p) = x: multiply by 1 / (1 - p), not by (1 - p).
    """
    for p in (0.2, 0.5, 0.75, 0.9):
        x = nonzero_values(32, 64, device=device, dtype=torch.float64)
        out = _run_on_copy(kata.Dropout(p).to(device), x)
        _expect_dropout_of(out, x, p, given=f"{dropout_call(p)} in training on x {shape_of(x)}")


def test_elements_dropped_independently(kata, device):
    """each element is dropped on its own, in no fixed count: not whole rows, columns or channels

    One draw per row or per feature, broadcast over the rest, drops whole lines of x: that
    is Dropout1d/2d, a different layer. Nor is the number dropped fixed: independent draws
    drop p · n elements only on average, a different number from call to call.

    One independent draw per element, over x's full shape, not one per row, and not a shuffled
    mask with exactly p · n zeros.
    """
    x = torch.ones(16, 16, 16, device=device)
    given = f"Dropout(0.5) in training on ones {shape_of(x)}"
    kept = _kept_of(_run_on_copy(kata.Dropout(0.5).to(device), x), x, given=given)
    for dim in range(kept.dim()):
        # A line of 16 independent elements is all kept or all dropped with probability
        # 2^-15, so half of the 256 lines along a dim never are by chance (p < 10^-500).
        whole = (kept.all(dim) | ~kept.any(dim)).sum().item()
        lines = kept.numel() // kept.shape[dim]
        if 2 * whole >= lines:
            free = iter("ijk")
            index = ", ".join(":" if d == dim else next(free) for d in range(kept.dim()))
            fail(
                f"{given}: along dim {dim}, {whole} of {lines} lines x[{index}] were kept or "
                "dropped as a whole; with independent draws that happens to 1 line in 32768. "
                "Each element needs its own draw."
            )
    # 200 calls on 10 elements: independent draws keep 5 of them a quarter of the time, and the
    # same number on every call with a chance below 10^-120.
    mine = kata.Dropout(0.5).to(device)
    x = torch.ones(10, device=device)
    given = f"Dropout(0.5) in training on ones {shape_of(x)}"
    kept = [_kept_of(_run_on_copy(mine, x), x, given=given) for _ in range(200)]
    counts = {int(k.sum()) for k in kept}
    # One mask every call is test_fresh_mask_each_call's to tell.
    if len(counts) == 1 and not all(torch.equal(k, kept[0]) for k in kept):
        fail(
            f"Dropout(0.5) in training kept exactly {counts.pop()} of 10 elements in each of 200 "
            "calls; independent draws keep a number that varies (from 0 to 10, 5 a quarter of "
            "the time). Draw each element on its own rather than choosing a fixed count."
        )


def test_keep_fraction(kata, device):
    """about a fraction p of the elements is dropped (within 6σ on 100,000 elements)

    p is the probability of dropping, so an element is kept with probability 1 - p.

    Keep an element where u ≥ p, u uniform on [0, 1): on n elements the kept fraction is 1 - p ±
    √(p(1 - p)/n).
    """
    n = 250 * 400
    for p in (0.1, 0.5, 0.9):
        x = torch.ones(250, 400, device=device)
        given = f"{dropout_call(p)} in training on {n:,} ones"
        kept = _kept_of(_run_on_copy(kata.Dropout(p).to(device), x), x, given=given)
        expect_keep_fraction(kept, p, given=given, what="elements", digits=4)


def test_fresh_mask_each_call(kata, device):
    """a fresh random mask on every forward call

    Each call drops a new random set of elements; a mask drawn once in __init__ or cached
    from an earlier call drops the same units forever.

    A new draw u, kept where u ≥ p, inside every forward call; never a cached mask.
    """
    mine = kata.Dropout(0.5).to(device)
    x = nonzero_values(4, 256, device=device)
    given = f"Dropout(0.5) called twice on the same x {shape_of(x)}"
    first = _kept_of(_run_on_copy(mine, x), x, given=given)
    second = _kept_of(_run_on_copy(mine, x), x, given=given)
    # Two independent masks of 1024 elements agree everywhere with probability 2^-1024.
    if torch.equal(first, second):
        fail(f"{given}: both calls dropped exactly the same elements. Draw a new mask per call.")


def test_follows_torch_seed(kata, device):
    """the mask comes from torch's random generator: torch.manual_seed reproduces it

    Seeding torch must make a training run repeatable; a mask drawn with Python's random
    module or numpy ignores torch.manual_seed, and is made on the host and copied to the GPU
    on every call.

    Draw the mask from torch's generator on x's device, as a uniform draw shaped like x compared
    with p, or a Bernoulli draw of the keep probability 1 − p.
    """
    mine = kata.Dropout(0.5).to(device)
    x = nonzero_values(8, 32, device=device)
    expect_follows_torch_seed(
        lambda: _run_on_copy(mine, x), given=f"Dropout(0.5) in training on x {shape_of(x)}"
    )


def test_to_dtype(kata, device):
    """after .to(torch.float64) it holds no float32 tensor, and drops float64 inputs in float64

    Dropout needs no tensor state; a tensor kept as a plain attribute is not converted by
    .to() and drags its own dtype and device into forward.

    Keep p as a Python float and build the mask from x inside forward, so that it takes x's dtype
    and device.
    """
    p = 0.3
    mine = kata.Dropout(p).to(device, torch.float64)
    expect_registered_state(mine, dtype=torch.float64, given=f"{dropout_call(p)}.to(float64)")
    x = nonzero_values(4, 8, device=device, dtype=torch.float64)
    given = f"{dropout_call(p)}.to(float64) on x {shape_of(x)}"
    out = _run_on_copy(mine, x)
    _kept_of(out, x, given=given)
    expect_scale_in_float64(out, x, p, given=given)


def test_follows_device(kata, device):
    """runs on CUDA: the mask is created on the input's device

    A random tensor made without a device lives on the CPU, whatever x's device is, and
    cannot be multiplied with a CUDA x.

    Draw the mask shaped like x and on x's device; a random tensor created from a shape alone lands
    on the CPU.
    """
    expect_follows_device(kata.Dropout(0.5), torch.randn(4, 8), device=device, given="Dropout(0.5)")


@pytest.mark.broad
def test_forward_matches_torch(kata, device):
    """forward matches nn.Dropout on several shapes, in float32 and float64

    In training every element is either dropped (0) or kept and scaled up; in eval mode the
    output equals the input, like nn.Dropout's.

    y = mask * x / (1 - p), with mask ~ Bernoulli(1 - p) drawn for every element.
    """
    shapes = [(4, 8), (2, 3, 8), (2, 7, 16), (5,)]
    for dtype in (torch.float32, torch.float64):
        for x_shape in shapes:
            mine, ref = kata.Dropout().to(device), nn.Dropout()
            x = nonzero_values(*x_shape, device=device, dtype=dtype)
            given = f"Dropout() in training on x {shape_of(x)}"
            _expect_dropout_of(_run_on_copy(mine, x), x, 0.5, given=given)
            mine.eval()
            ref.eval()
            given = f"Dropout() in eval mode on x {shape_of(x)}"
            expect_close(_run_on_copy(mine, x), ref(x), given=given, rtol=0, atol=0)


@pytest.mark.broad
def test_gradients_match(kata, device):
    """the gradient for the input is mask / (1 - p), the same mask as the output's

    Build the output from x with differentiable operations and autograd does the rest; a scale
    applied with gradient tracking off, or through the data attribute, leaves 1 / (1 - p) out of the
    gradient.

    dy/dx = 0 where an element was dropped and 1 / (1 - p) where it was kept.
    """
    p = 0.3
    x = nonzero_values(5, 3, 8, device=device, dtype=torch.float64).requires_grad_()
    grad_out = torch.randn_like(x)
    given = f"{dropout_call(p)} in training on x {shape_of(x)}"
    out = _run_on_copy(kata.Dropout(p).to(device), x)
    kept = _expect_dropout_of(out, x, p, given=given).to(device)
    _backward(out, grad_out, given=given)
    expect_grads_close({"input": x.grad}, {"input": grad_out * kept / (1 - p)}, given=given)


@pytest.mark.parity
def test_invalid_p_raises(kata):
    """p outside [0, 1] raises ValueError in __init__, with torch's message

    A probability must lie in [0, 1]: check p when the module is built, before any forward.

    In the constructor, when p < 0 or p > 1, fail with a ValueError carrying torch's message
    (dropout probability has to be between 0 and 1, but got the value of p).
    """
    for p in (-0.1, 1.5, 2):
        given = f"Dropout({p})"
        error = expect_raises(ValueError, lambda p=p: kata.Dropout(p), given=given)
        want = str(expect_raises(ValueError, lambda p=p: nn.Dropout(p), given=f"nn.{given}"))
        if str(error) != want:
            fail(f"{given} raised ValueError({str(error)!r}); torch's message is {want!r}.")


@pytest.mark.parity
def test_inplace(kata, device):
    """inplace=True writes the result into the input and returns it

    In-place dropout saves memory by overwriting x, as torch does; the caller gets x back.

    With inplace set, multiply x by the mask in place and hand back x itself, the same tensor
    object.
    """
    p = 0.25
    mine = kata.Dropout(p, inplace=True).to(device)
    x = nonzero_values(32, 64, device=device)
    before = x.clone()
    given = f"{dropout_call(p, True)} in training on x {shape_of(x)}"
    out = expect_like(mine(x), x, given=given)
    # All 2048 elements kept at p = 0.25: probability 0.75^2048, below 10^-255.
    if torch.equal(x, before):
        fail(f"{given}: x still holds its original values; write the result into x.")
    kept = _kept_of(x, before, given=f"{given}, x after the call")
    if out.data_ptr() != x.data_ptr():
        fail(f"{given}: forward returned a new tensor; with inplace=True return x itself.")
    expect_close(out, x, given=given, what="returned tensor", rtol=0, atol=0)
    # The other checks run out of place: the in-place path's own drop rate and scale are
    # their properties, met here.
    got, xs = x.double().cpu(), before.double().cpu()
    rtol, atol = TOLERANCE[x.dtype]
    if not torch.allclose(got[kept], xs[kept] / (1 - p), rtol=rtol, atol=atol):
        scale = (got[kept] / xs[kept]).median().item()
        fail_for(
            "test_kept_values_scaled",
            f"{given}: the kept elements of x are x · {scale:.6g}, expected x / (1 - p) = "
            f"x · {1 / (1 - p):.6g}: scale the survivors on the in-place path too.",
        )
    # Kept with probability 0.75: 1536 ± 20 of 2048; fewer than half is 26σ away.
    if (count := int(kept.sum())) < kept.numel() // 2:
        fail_for(
            "test_keep_fraction",
            f"{given}: {count} of {kept.numel()} elements were kept, where about "
            f"{1 - p:.0%} are: on the in-place path too, keep each with probability 1 - p.",
        )


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_half_precision(kata, device, dtype):
    """half-precision inputs keep their dtype: the mask follows x's dtype

    A mask made float32, by an upcast or by a random draw from a shape alone, promotes a float16
    product to float32.

    Compare a uniform draw shaped like x with p, then cast the mask to x's dtype, or multiply by the
    boolean mask itself.
    """
    p = 0.2
    mine = kata.Dropout(p).to(device)
    x = nonzero_values(8, 64, device=device, dtype=dtype)
    # x / (1 - p) rounds differently in half precision depending on the formula (x * 1.25 in
    # one step or two): allow a few ulps; the mistakes checked here are far larger.
    given = f"{dropout_call(p)} in training on x {shape_of(x)}"
    _kept_of(_run_on_copy(mine, x), x, given=given, rtol=2e-2, atol=2e-2)


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your Dropout and nn.Dropout, in training, on activations."""
    shape = (8192, 4096) if device.type == "cuda" else (2048, 1024)
    mine, ref = kata.Dropout(0.1).to(device), nn.Dropout(0.1)
    x = torch.randn(shape, device=device, requires_grad=True)
    given = f"Dropout(0.1) in training on x {shape_of(x)}"
    return PerfCase.of_layers(given, mine, ref, x, builtin_name="nn.Dropout")


# -- helpers the checks above share ---------------------------------------------------------


def dropout_call(p=0.5, inplace=False):
    return f"Dropout({p}, inplace=True)" if inplace else f"Dropout({p})"


def _run_on_copy(module, x):
    """module(x.clone()): the checks compare with x, which stays as it was.

    Whether forward modifies its input is for test_input_unmodified and test_inplace alone.
    """
    return module(x.clone())


def _expect_dropout_of(out, x, p, *, given, rtol=None, atol=None):
    """Every element of out is 0 (dropped) or x / (1 - p) (kept), for p < 1.

    Returns the boolean mask of kept elements, on the CPU.
    """
    out = _shaped_like(out, x, given=given)
    out = expect_like(out, x, given=given)
    got, xs = out.detach().double().cpu(), x.detach().double().cpu()
    scaled = xs / (1 - p)
    default_rtol, default_atol = TOLERANCE[x.dtype]
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    kept = got != 0
    bad = kept & ~torch.isclose(got, scaled, rtol=rtol, atol=atol)
    if bad.any():
        i = tuple(int(k) for k in bad.nonzero()[0])
        fail(
            f"{given}: output element {list(i)} is {got[i].item():.6g} for x = {xs[i].item():.6g}; "
            f"expected 0 (dropped) or x / (1 - p) = {scaled[i].item():.6g} (kept). "
            f"{int(bad.sum())} of {bad.numel()} elements are neither "
            f"(rtol={rtol:g}, atol={atol:g})."
        )
    return kept


def _shaped_like(out, x, *, given):
    """out, a tensor shaped like x: an output of another shape is test_output_like_input's
    mistake, and no check of the values can read it."""
    out = expect_tensor(out)
    if out.shape != x.shape:
        fail_for(
            "test_output_like_input",
            f"{given}: the output has shape {tuple(out.shape)}, x has shape {tuple(x.shape)}; "
            "dropout zeroes elements rather than removing them, so its output lines up with x.",
        )
    return out


def _kept_of(out, x, *, given, rtol=None, atol=None):
    """The boolean mask of the elements out kept, read from out != 0 (x has no zeros), on the CPU.

    For the checks of the drop pattern: they judge which elements were dropped, not the value
    of the kept ones, which is test_kept_values_scaled's. out must line up with x (an output of
    another shape is test_output_like_input's mistake), and the kept elements must be x times
    one factor, whatever it is: the learner's own scale, so that a wrong scale fails here only
    where the kept values are not a scaled copy of x at all.
    """
    out = expect_like(_shaped_like(out, x, given=given), x, given=given)
    got, xs = out.detach().double().cpu(), x.detach().double().cpu()
    kept = got != 0
    if kept.any():
        default_rtol, default_atol = TOLERANCE[x.dtype]
        rtol = default_rtol if rtol is None else rtol
        atol = default_atol if atol is None else atol
        scale = (got[kept] / xs[kept]).median()
        bad = kept & ~torch.isclose(got, xs * scale, rtol=rtol, atol=atol)
        if bad.any():
            i = tuple(int(k) for k in bad.nonzero()[0])
            fail_for(
                "test_kept_values_scaled",
                f"{given}: output element {list(i)} is {got[i].item():.6g} for x = "
                f"{xs[i].item():.6g}, where most kept elements are x · {scale.item():.6g}: the "
                f"kept values are not one scaled copy of x. {int(bad.sum())} of {bad.numel()} "
                f"elements are neither 0 nor x · {scale.item():.6g} (rtol={rtol:g}, "
                f"atol={atol:g}).",
            )
    return kept


def _backward(out, grad_out, *, given):
    """out.backward(grad_out), failing clearly when out is cut off from autograd."""
    if not out.requires_grad:
        fail(
            f"{given}: the output does not require grad although x does, so no gradient "
            "reaches x. Build it from x with differentiable operations (x * mask), not from a "
            "new tensor, .detach() or torch.no_grad()."
        )
    out.backward(grad_out)
