"""Hidden checks for the LayerNorm kata, each compared with torch.nn.LayerNorm."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from grader.checks import (
    BUILTIN_NORM_MODULES,
    BUILTIN_NORMS,
    expect_close,
    expect_follows_device,
    expect_from_scratch,
    expect_grads_close,
    expect_like,
    expect_raises,
    expect_registered_state,
    expect_state_dict_round_trip,
    expect_vectorized,
    fail,
    shape_of,
)

KATA = "layernorm"


def pair(kata, *args, **kwargs):
    """The learner's LayerNorm and torch's, with the same random affine parameters."""
    ref = nn.LayerNorm(*args, **kwargs)
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_()
    mine = kata.LayerNorm(*args, **kwargs)
    try:
        mine.load_state_dict(ref.state_dict())
    except Exception as e:
        fail(f"could not load nn.LayerNorm's parameters into yours: {e}")
    return mine, ref


def call(args, kwargs):
    shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"LayerNorm({', '.join(shown)})"


def test_output_like_input(kata, device):
    """output has the input's shape, dtype and device

    Normalizing changes values, not the shape: keep every dimension, and return the
    dtype you were given.
    """
    for dtype in (torch.float32, torch.float64):
        mine, _ = pair(kata, 8)
        mine = mine.to(device, dtype)
        x = torch.randn(3, 5, 8, device=device, dtype=dtype)
        expect_like(mine(x), x, given=f"LayerNorm(8) on x {shape_of(x)}")


def test_parameters(kata):
    """weight and bias are parameters named, shaped and initialised like torch's

    Register them with nn.Parameter so the optimizer sees them: weight starts at ones,
    bias at zeros, both of shape normalized_shape.
    """
    for args in ((8,), ((3, 4),)):
        mine, ref = kata.LayerNorm(*args), nn.LayerNorm(*args)
        have = {n: p for n, p in mine.named_parameters()}
        want = dict(ref.named_parameters())
        if set(have) != set(want):
            fail(f"LayerNorm{args} has parameters {sorted(have)}, expected {sorted(want)}.")
        for name, p in want.items():
            expect_close(have[name], p.detach(), given=f"LayerNorm{args}", what=f"initial {name}")
    if tuple(kata.LayerNorm(8).normalized_shape) != (8,):
        fail(
            "LayerNorm(8).normalized_shape should be (8,): turn an int into a 1-tuple, like torch."
        )


def test_forward_matches_torch(kata, device):
    """forward matches nn.LayerNorm on several shapes, an empty batch and float64

    Normalize each sample over its last len(normalized_shape) dimensions, then scale by
    weight and shift by bias.

    y = (x - mean) / sqrt(var + eps) * weight + bias, with mean and var over those dimensions.
    """
    cases = [((8,), (4, 8)), ((8,), (2, 3, 8)), ((8,), (0, 8)), ((16,), (2, 7, 16))]
    for dtype in (torch.float32, torch.float64):
        for shape, x_shape in cases:
            mine, ref = pair(kata, shape)
            mine, ref = mine.to(device, dtype), ref.to(device, dtype)
            x = torch.randn(x_shape, device=device, dtype=dtype) * 3 + 1
            given = f"LayerNorm({shape[0]}) on x {shape_of(x)}"
            expect_close(mine(x), ref(x).detach(), given=given)


def test_multidim_normalized_shape(kata, device):
    """a tuple normalized_shape such as (C, H, W) normalizes over all those dimensions

    normalized_shape names trailing dimensions: with (3, 4, 5), the mean and variance are
    taken over the last three dimensions together, not only the last one.
    """
    for shape, x_shape in (((4, 5), (2, 3, 4, 5)), ((3, 4, 5), (2, 3, 4, 5))):
        mine, ref = pair(kata, shape)
        mine, ref = mine.to(device), ref.to(device)
        x = torch.randn(x_shape, device=device) * 2 + torch.arange(5.0, device=device)
        expect_close(mine(x), ref(x).detach(), given=f"LayerNorm({shape}) on x {shape_of(x)}")


def test_biased_variance(kata, device):
    """the variance is the biased one (divide by N, not N - 1), as torch uses

    LayerNorm uses the population variance of the features: torch.var(..., unbiased=False),
    or mean((x - mean)^2).
    """
    x = torch.tensor([[1.0, 2.0, 4.0, 7.0]], dtype=torch.float64, device=device)
    ln = kata.LayerNorm(4, eps=0.0, elementwise_affine=False).to(device, torch.float64)
    mean = x.mean(-1, keepdim=True)
    expected = (x - mean) / ((x - mean) ** 2).mean(-1, keepdim=True).sqrt()
    expect_close(ln(x), expected, given="LayerNorm(4, eps=0) on x = [1, 2, 4, 7]")


def test_eps_inside_sqrt(kata, device):
    """eps is added to the variance, inside the square root

    The denominator is sqrt(var + eps), not sqrt(var) + eps; the two differ most when the
    variance is small.
    """
    x = torch.randn(4, 8, dtype=torch.float64, device=device) * 0.1
    ln = kata.LayerNorm(8, eps=0.05, elementwise_affine=False).to(device, torch.float64)
    expected = F.layer_norm(x, (8,), eps=0.05)
    expect_close(ln(x), expected, given=f"LayerNorm(8, eps=0.05) on small inputs x {shape_of(x)}")


def test_no_elementwise_affine(kata, device):
    """elementwise_affine=False: no parameters, weight and bias are None

    Register them as None (self.register_parameter("weight", None)) so state_dict, .to()
    and repr behave like torch's.
    """
    mine = kata.LayerNorm(8, elementwise_affine=False)
    if list(mine.parameters()):
        fail("LayerNorm(8, elementwise_affine=False) should have no parameters.")
    if (
        getattr(mine, "weight", "missing") is not None
        or getattr(mine, "bias", "missing") is not None
    ):
        fail("LayerNorm(8, elementwise_affine=False) should have weight = None and bias = None.")
    x = torch.randn(4, 8, device=device) * 2 + 1
    expect_close(
        mine.to(device)(x),
        F.layer_norm(x, (8,)),
        given=f"elementwise_affine=False, x {shape_of(x)}",
    )


def test_no_bias(kata, device):
    """bias=False: a weight but no bias parameter (bias is None)

    Only the shift is dropped: y = x_hat * weight.
    """
    mine, ref = pair(kata, 8, bias=False)
    if getattr(mine, "bias", "missing") is not None:
        fail("LayerNorm(8, bias=False) should have bias = None.")
    names = sorted(n for n, _ in mine.named_parameters())
    if names != ["weight"]:
        fail(f"LayerNorm(8, bias=False) should have only a weight parameter, got {names}.")
    x = torch.randn(4, 8, device=device)
    mine, ref = mine.to(device), ref.to(device)
    expect_close(mine(x), ref(x).detach(), given=f"LayerNorm(8, bias=False) on x {shape_of(x)}")


def test_numerically_stable(kata, device):
    """stable in float32 when the input has a large mean (no E[x²] - E[x]² shortcut)

    Subtract the mean first, then average the squared deviations. E[x²] - E[x]² subtracts
    two huge, nearly equal numbers and loses every significant digit in float32.
    """
    x = 1000 + torch.randn(16, 256, device=device)
    ln = kata.LayerNorm(256, elementwise_affine=False).to(device)
    expected = F.layer_norm(x, (256,))
    given = f"LayerNorm(256) on x = 1000 + randn {shape_of(x)}"
    expect_close(ln(x), expected, given=given, rtol=0, atol=2e-3)


def test_constant_input(kata, device):
    """a constant input gives bias, with no NaN

    Each row of a constant input has zero variance: eps keeps the division finite, and the
    normalized value is 0, so the output is just the bias.
    """
    mine, ref = pair(kata, 8)
    mine, ref = mine.to(device), ref.to(device)
    x = torch.full((3, 8), 2.5, device=device)
    expect_close(mine(x), ref(x).detach(), given="LayerNorm(8) on a constant input")


def test_gradients_match(kata, device):
    """gradients for the input, weight and bias match torch's

    Build forward from differentiable tensor operations and autograd does the rest; no
    .detach() or in-place tricks on the path from x to the output.
    """
    mine, ref = pair(kata, (3, 8))
    mine, ref = mine.to(device, torch.float64), ref.to(device, torch.float64)
    x = torch.randn(5, 3, 8, dtype=torch.float64, device=device) * 2 + 1
    grad_out = torch.randn_like(x)
    got, want = {}, {}
    for module, grads in ((mine, got), (ref, want)):
        xi = x.clone().requires_grad_()
        module(xi).backward(grad_out)
        grads["input"] = xi.grad
        grads.update({n: p.grad for n, p in module.named_parameters()})
    expect_grads_close(got, want, given=f"LayerNorm((3, 8)) on x {shape_of(x)}, float64")


def test_state_dict_round_trip(kata):
    """state_dict loads from nn.LayerNorm and into it, both ways

    Use torch's names and shapes (weight, bias): a checkpoint trained with nn.LayerNorm
    must load into your module, and yours into nn.LayerNorm.
    """
    for kwargs in ({}, {"bias": False}, {"elementwise_affine": False}):
        expect_state_dict_round_trip(
            kata.LayerNorm((3, 8), **kwargs),
            nn.LayerNorm((3, 8), **kwargs),
            given=call(((3, 8),), kwargs),
        )


def test_to_dtype(kata, device):
    """after .to(torch.float64) the module computes in float64

    Parameters move with .to() only if they are registered: nn.Parameter (or a buffer),
    not a plain tensor attribute.
    """
    mine, ref = pair(kata, 8)
    mine, ref = mine.to(device, torch.float64), ref.to(device, torch.float64)
    expect_registered_state(mine, dtype=torch.float64, given="LayerNorm(8).to(float64)")
    x = torch.randn(4, 8, dtype=torch.float64, device=device)
    expect_close(mine(x), ref(x).detach(), given=f"LayerNorm(8).to(float64) on x {shape_of(x)}")


def test_follows_device(kata, device):
    """runs on CUDA: parameters move with .to(device), nothing is created on the CPU

    Tensors created inside forward must live on x's device (device=x.device), and state
    must be parameters or buffers so that .to(device) moves it.
    """
    mine, _ = pair(kata, 8)
    expect_follows_device(mine, torch.randn(4, 8), device=device, given="LayerNorm(8)")


def test_input_unmodified(kata, device):
    """the input tensor is left unmodified

    Avoid in-place operations on x (x -= mean, x.sub_()); compute into new tensors.
    """
    mine, _ = pair(kata, 8)
    x = torch.randn(4, 8, device=device)
    before = x.clone()
    mine.to(device)(x)
    if not torch.equal(x, before):
        fail("LayerNorm(8) changed its input x in place; the caller's tensor must stay as it was.")


def test_from_scratch(kata, device):
    """implemented from tensor operations, not the built-in layer norm

    The exercise is the formula: F.layer_norm, nn.LayerNorm and the other built-in norms
    are off limits here; mean, var, sqrt and rsqrt are fine.
    """
    mine, _ = pair(kata, 8)
    mine = mine.to(device)
    x = torch.randn(4, 8, device=device)
    expect_from_scratch(
        lambda: mine(x), BUILTIN_NORMS, module=mine, forbidden_modules=BUILTIN_NORM_MODULES
    )


def test_vectorized(kata, device):
    """vectorized: no Python loop over rows or elements

    Reduce over whole dimensions at once: x.mean(dim=dims, keepdim=True) for all the
    normalized dimensions, with broadcasting for the rest.
    """
    small, _ = pair(kata, 16)
    large, _ = pair(kata, 128)
    small, large = small.to(device), large.to(device)
    xs, xl = torch.randn(2, 16, device=device), torch.randn(64, 128, device=device)
    expect_vectorized(
        lambda: small(xs),
        lambda: large(xl),
        given="LayerNorm(16) on (2, 16) vs LayerNorm(128) on (64, 128)",
    )


def test_wrong_trailing_shape_raises(kata, device):
    """an input whose trailing dimensions do not match normalized_shape raises an error

    Check x.shape[-len(normalized_shape):] == normalized_shape and raise a ValueError or
    RuntimeError that says what was expected: otherwise LayerNorm((3, 4),
    elementwise_affine=False) would silently normalize a (2, 5, 4) input over the wrong
    dimensions.
    """
    ln = kata.LayerNorm((3, 4), elementwise_affine=False).to(device)
    for x_shape in ((2, 5, 4), (4,)):
        x = torch.randn(x_shape, device=device)
        expect_raises(
            (ValueError, RuntimeError),
            lambda x=x: ln(x),
            given=f"LayerNorm((3, 4), elementwise_affine=False) on x {shape_of(x)}",
        )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_half_precision(kata, device, dtype):
    """half-precision inputs work and match torch within half-precision tolerance

    Keep the input's dtype for the output; computing the statistics in float32 and casting
    back is what torch does on GPUs.
    """
    mine, ref = pair(kata, 64)
    mine, ref = mine.to(device, dtype), ref.to(device, torch.float32)
    x = torch.randn(8, 64, device=device).to(dtype)
    expected = ref(x.float()).detach().to(dtype)
    expect_close(
        mine(x),
        expected,
        given=f"LayerNorm(64).to({dtype}) on x {shape_of(x)}",
        rtol=2e-2,
        atol=2e-2,
    )
