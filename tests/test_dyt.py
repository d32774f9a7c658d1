"""Hidden checks for the DyT kata: DyT(num_features, alpha_init_value=0.5, channels_last=True),
against the formula weight · tanh(α · x) + bias computed in float64, and against the official
DynamicTanh (github.com/jiachenzhu/DyT) for the shapes of its state.

Interview core first: α one learnable scalar, the initial values, α inside the tanh, weight and
bias after it, the channels-first form (against the layer's own channels-last form, so that it
sees the axis alone), the output's shape and dtype, α's gradient; then the broad comparisons of
outputs and gradients. Each check writes α, weight and bias into the learner's tensors, so that
a wrong initial value is test_initial_values' mistake alone. Then torch parity
(@pytest.mark.parity): α of shape (1,) as the official code's, float64 computed in float64, half
precision in its own dtype. Pure element-wise work on small tensors.
"""

import pytest
import torch

from norm_katas.checks import (
    MISSING,
    PerfCase,
    Suite,
    describe_call,
    dtype_name,
    expect_close,
    expect_float64_arithmetic,
    expect_grads_close,
    expect_input_unmodified,
    expect_like,
    expect_tensor,
    fail,
    fail_for,
    nonzero_values,
    shape_of,
    values_close,
)

SUITE = Suite()


def test_alpha_is_one_learnable_scalar(kata):
    """α is one learnable scalar: an nn.Parameter of one element, shared by every channel

    DyT learns a single α for the whole layer: it sets how soon the tanh saturates, the same for
    every channel, whereas the weight scales each channel. α must learn, so it is a Parameter;
    a buffer, a plain number or a tensor kept as an attribute get no gradient, and no optimizer
    sees them.

    α: an nn.Parameter named alpha holding one element, filled with alpha_init_value; the
    per-channel weight and bias are the ones of shape (num_features,).
    """
    layer = kata.DyT(8)
    given = "DyT(8)"
    alpha = getattr(layer, "alpha", MISSING)
    if alpha is MISSING:
        fail(f"{given} has no attribute alpha: name the learnable scalar alpha, as the paper does.")
    if not isinstance(alpha, torch.Tensor):
        fail(
            f"{given}.alpha is a {type(alpha).__name__}, not a tensor: a plain number never "
            "learns. Make it an nn.Parameter of one element."
        )
    if dict(layer.named_parameters()).get("alpha") is not alpha:
        kind = "a buffer" if any(b is alpha for b in layer.buffers()) else "a plain attribute"
        fail(
            f"{given}.alpha is {kind}, not an nn.Parameter: it gets no gradient and no "
            "optimizer trains it. Register it as an nn.Parameter."
        )
    if alpha.numel() != 1:
        fail(
            f"{given}.alpha has shape {tuple(alpha.shape)}: α is one scalar shared by every "
            "channel (the per-channel scale is the weight's). Give it one element, shape (1,)."
        )
    if not alpha.requires_grad:
        fail(f"{given}.alpha does not require grad: α is learned.")


def test_initial_values(kata):
    """α starts at alpha_init_value (0.5 by default), weight at ones and bias at zeros

    An untrained DyT is tanh(α₀ · x): the paper's default α₀ = 0.5 keeps the tanh near its
    linear range for activations of order one, and weight and bias start as LayerNorm's do, so
    that the layer it replaces and DyT start alike. alpha_init_value is a constructor argument:
    the paper tunes it, lower for large language models.

    α₀ = alpha_init_value in every element of α; weight = 1 and bias = 0, nn.Parameters of shape
    (num_features,).
    """
    for args, kwargs, alpha0 in (((8,), {}, 0.5), ((6,), {"alpha_init_value": 2.0}, 2.0)):
        given = describe_call("DyT", *args, **kwargs)
        layer = kata.DyT(*args, **kwargs)
        c = args[0]
        params = dict(layer.named_parameters())
        for name, want in (("weight", torch.ones(c)), ("bias", torch.zeros(c))):
            value = params.get(name)
            if value is None:
                fail(f"{given} has no parameter {name}: register an nn.Parameter of shape ({c},).")
            expect_close(value.detach(), want, given=given, what=f"the initial {name}")
        alpha = torch.as_tensor(getattr(layer, "alpha", float("nan"))).detach().double()
        if not bool((alpha == alpha0).all()):
            fail(
                f"{given}: α starts at {alpha.flatten().tolist()}, expected {alpha0} "
                "(alpha_init_value, 0.5 by default)."
            )


def test_alpha_inside_tanh(kata, device):
    """α scales x inside the tanh: tanh(α · x), not α · tanh(x)

    α decides where the tanh saturates: with α = 2 an input of 1 is already near the flat part.
    Multiplying after the tanh only rescales an output squashed to ±1 and leaves the shape of
    the curve as it was.

    y = tanh(α · x) with weight 1 and bias 0: here α = 2, so y = tanh(2x), within ±1.
    """
    expect_tanh_at_unit_scale(kata, device)
    layer = kata.DyT(8).to(device)
    place(layer, alpha=2.0, weight=torch.ones(8), bias=torch.zeros(8))
    x = torch.randn(4, 8, device=device) * 2
    expect_close(
        run(layer, x),
        torch.tanh(2 * x.double()).float(),
        given=f"DyT(8) with α = 2, weight ones and bias zeros, on x {shape_of(x)}",
        judge_dtype=False,
    )


def test_affine_after_tanh(kata, device):
    """weight and bias scale and shift the tanh's output per channel: weight · tanh(α · x) + bias

    The tanh squashes, then the per-channel weight and bias give each channel its own scale and
    offset, as LayerNorm's weight and bias do after the normalization. Put inside the tanh, the
    weight would only move where it saturates, and every channel would stay within ±1.

    y[..., c] = weight[c] · tanh(α · x[..., c]) + bias[c]: here α = 1, weight and bias random.
    """
    expect_tanh_at_unit_scale(kata, device)
    layer = kata.DyT(8).to(device)
    weight, bias = nonzero_values(8, device="cpu") * 2, torch.randn(8)
    place(layer, alpha=1.0, weight=weight, bias=bias)
    x = torch.randn(4, 8, device=device) * 2
    want = formula(x, 1.0, weight, bias, channels_last=True)
    expect_close(
        run(layer, x),
        want.float(),
        given=f"DyT(8) with α = 1 and a random weight and bias, on x {shape_of(x)}",
        judge_dtype=False,
    )


def test_channels_first(kata, device):
    """channels_last=False: the channels are dim 1 of (N, C, H, W), each with its weight and bias

    In a ConvNeXt the activations are (N, C, H, W), and DyT replaces a LayerNorm2d there: the
    tanh is element-wise, but the weight and bias belong to the channels, dim 1. A vector of C
    values broadcasts against the last dim unless it is shaped (C, 1, 1).

    y[n, c, h, w] = weight[c] · tanh(α · x[n, c, h, w]) + bias[c]: your channels-first layer on
    x against your channels-last layer on x with its channels moved last, the same α, weight and
    bias.
    """
    for x_shape in ((2, 4, 4, 4), (2, 4, 3, 5)):
        first = kata.DyT(4, channels_last=False).to(device)
        last = kata.DyT(4).to(device)
        weight, bias = nonzero_values(4, device="cpu") * 2, torch.randn(4)
        for layer in (first, last):
            place(layer, alpha=0.7, weight=weight, bias=bias)
        x = torch.randn(x_shape, device=device) * 2
        want = expect_tensor(run(last, x.permute(0, 2, 3, 1))).detach().permute(0, 3, 1, 2)
        expect_close(
            run(first, x),
            want,
            given=(
                f"DyT(4, channels_last=False) on x {shape_of(x)}, against your DyT(4) on x "
                "with its channels moved last, the same α, weight and bias"
            ),
            judge_dtype=False,
            equal_nan=False,
        )


def test_output_like_input(kata, device):
    """the output has the input's shape and dtype

    DyT works element by element: it changes values, never the shape, and the layer's state
    is in the module's dtype, as its input is. A tensor made in a dtype of its own (float64 from
    a numpy array, or one made with a float64 dtype) promotes every output it touches.

    y has x's shape and dtype, in both layouts: α, weight and bias are in the module's dtype,
    float32 as built, float64 after .double().
    """
    # Channels first on (2, 4, 4, 4): weight and bias on the wrong axis still broadcast there,
    # which is test_channels_first's mistake; this check sees the shape and the dtype.
    for make, x_shape in (
        (lambda: kata.DyT(8), (3, 5, 8)),
        (lambda: kata.DyT(4, channels_last=False), (2, 4, 4, 4)),
    ):
        for dtype in (torch.float32, torch.float64):
            layer = (make() if dtype == torch.float32 else make().double()).to(device)
            x = torch.randn(x_shape, dtype=dtype, device=device)
            name = "DyT(4, channels_last=False)" if len(x_shape) == 4 else "DyT(8)"
            name += "" if dtype == torch.float32 else ".double()"
            given = f"{name} on x {shape_of(x)}"
            expect_like(run(layer, x), x, given=given)


def test_input_unmodified(kata, device):
    """the input tensor is left unmodified

    The caller still owns x: a residual stream, say, that is added back after the layer.
    Scaling x in place (an in-place multiply by α, on a tensor that needs no gradient) saves
    one allocation and leaves the caller with α · x where x was.

    Compute α · x into a new tensor, inside the tanh: never an in-place method (its name ends
    in an underscore) or an augmented assignment on x.
    """
    for layer, x_shape, name in (
        (kata.DyT(8), (3, 5, 8), "DyT(8)"),
        (kata.DyT(4, channels_last=False), (2, 4, 4, 4), "DyT(4, channels_last=False)"),
    ):
        x = torch.randn(x_shape, device=device)
        expect_input_unmodified(layer.to(device), x, given=f"{name} on x {shape_of(x)}")


def test_alpha_learns(kata, device):
    """α gets its gradient: it stays in the graph, as a tensor, in forward

    α learns by gradient descent like the weight: forward must use the Parameter itself. Its
    value read out as a Python number (item(), float()) or detached is a constant to autograd,
    and α never moves from its initial value.

    ∂L/∂α, L = Σ g · y with g the gradient of the output, is the rate at which L changes with α:
    autograd's value is compared with (L(α + h) − L(α − h)) / 2h from your layer's own outputs,
    in float64, h = 0.001.
    """
    layer = kata.DyT(8).to(device, torch.float64)
    weight = nonzero_values(8, device="cpu", dtype=torch.float64).abs()
    bias = torch.randn(8, dtype=torch.float64)
    place(layer, alpha=0.8, weight=weight, bias=bias)
    alpha = getattr(layer, "alpha", None)
    if not isinstance(alpha, torch.nn.Parameter):
        fail_for("test_alpha_is_one_learnable_scalar", "DyT(8).alpha is not an nn.Parameter.")
    x = torch.randn(4, 8, dtype=torch.float64, device=device) * 2
    g = x.sign()  # every term of ∂L/∂α positive: a gradient far from 0
    expect_tensor(run(layer, x)).backward(g)
    given = f"DyT(8) in float64 with α = 0.8, on x {shape_of(x)}"
    if alpha.grad is None:
        fail(
            f"{given}: α got no gradient. Use the Parameter itself in forward: a value read "
            "with item() or float(), or detached, is a constant to autograd."
        )
    # Against the layer's own outputs: where α goes is other checks' business, that its
    # gradient is the one its use in forward gives is this one's. h = 1e-3 keeps the
    # difference clear of float32 rounding (a layer may compute in float32: dtype policy) and
    # its error (h² times the third derivative) below 1e-4 of the gradient.
    h, loss = 1e-3, []
    for moved in (0.8 + h, 0.8 - h):
        place(layer, alpha=moved, weight=weight, bias=bias)
        with torch.no_grad():
            loss.append((expect_tensor(run(layer, x)).double() * g).sum())
    expect_close(
        alpha.grad.sum(),
        (loss[0] - loss[1]) / (2 * h),
        given=f"{given}, against (L(α + h) − L(α − h)) / 2h of your layer's outputs, h = 1e-3",
        what="α's gradient",
        rtol=1e-3,
        atol=1e-3,
    )


@pytest.mark.broad
def test_forward_matches_formula(kata, device):
    """the output is weight · tanh(α · x) + bias, channels last and first, in float32 and float64

    Every element goes through the tanh of α times itself, then its channel's weight and bias.

    y = weight · tanh(α · x) + bias, with weight and bias along the last dim, or along dim 1 of
    an (N, C, H, W) input when channels_last=False.
    """
    cases = (((8,), (2, 3, 8), True), ((8,), (8,), True), ((4,), (2, 4, 3, 5), False))
    for dtype in (torch.float32, torch.float64):
        for (c,), x_shape, channels_last in cases:
            kwargs = {} if channels_last else {"channels_last": False}
            layer = kata.DyT(c, **kwargs).to(device, dtype)
            weight, bias = nonzero_values(c, device="cpu", dtype=dtype) * 2, torch.randn(c)
            place(layer, alpha=0.8, weight=weight, bias=bias.to(dtype))
            x = torch.randn(x_shape, dtype=dtype, device=device) * 2
            want = formula(x, 0.8, weight, bias, channels_last)
            given = f"{describe_call('DyT', c, **kwargs)} with α = 0.8 on x {shape_of(x)}"
            expect_close(run(layer, x), want.to(dtype), given=given)


@pytest.mark.broad
def test_gradients_match(kata, device):
    """gradients for x, α, weight and bias match autograd on the formula, in float64

    Built from differentiable operations on the Parameters themselves, the layer needs no backward
    of its own: autograd differentiates the tanh, the products and the sum.

    ∂y/∂x = weight · α · (1 − tanh²(α x)); ∂y/∂weight = tanh(α x); ∂y/∂bias = 1; ∂y/∂α = weight · x
    · (1 − tanh²(α x)), each summed over what it is shared by.
    """
    for (c,), x_shape, channels_last in (((8,), (4, 8), True), ((4,), (2, 4, 3, 3), False)):
        kwargs = {} if channels_last else {"channels_last": False}
        layer = kata.DyT(c, **kwargs).to(device, torch.float64)
        weight = nonzero_values(c, device=device, dtype=torch.float64)
        bias = torch.randn(c, dtype=torch.float64, device=device)
        place(layer, alpha=0.8, weight=weight, bias=bias)
        x = torch.randn(x_shape, dtype=torch.float64, device=device) * 2
        g = torch.randn_like(x)
        xi = x.clone().requires_grad_()
        expect_tensor(run(layer, xi)).backward(g)
        params = dict(layer.named_parameters())
        got = {"input": xi.grad}
        got |= {n: params[n].grad for n in ("weight", "bias") if n in params}
        alpha = getattr(layer, "alpha", None)
        if isinstance(alpha, torch.Tensor) and alpha.grad is not None:
            got["alpha"] = alpha.grad.sum().reshape(1)
        alpha0 = torch.tensor([0.8], dtype=torch.float64, device=device)
        ref = [t.clone().requires_grad_() for t in (x, alpha0, weight, bias)]
        formula(*ref[:2], *ref[2:], channels_last).backward(g)
        want = dict(zip(("input", "alpha", "weight", "bias"), (t.grad for t in ref), strict=True))
        given = f"{describe_call('DyT', c, **kwargs)} in float64 on x {shape_of(x)}"
        expect_grads_close(got, want, given=given)


@pytest.mark.parity
def test_alpha_shape_like_official(kata):
    """α has shape (1,), as the official DynamicTanh's, so its checkpoints load both ways

    The paper's code creates α as a one-element vector, so its state_dict holds alpha of shape
    (1,), weight and bias of shape (C,). A 0-dim α computes the same, but a strict
    load_state_dict refuses to put a (1,) tensor into it, and the other way round.

    alpha: shape (1,); weight and bias: shape (num_features,); nothing else in the state_dict.
    """
    layer = kata.DyT(8)
    want = {"alpha": (1,), "weight": (8,), "bias": (8,)}
    have = {k: tuple(v.shape) for k, v in layer.state_dict().items()}
    if have != want:
        fail(
            f"DyT(8)'s state_dict holds {have}, the official DynamicTanh's {want}: its "
            "checkpoints do not load into yours. Make α of shape (1,), torch.ones(1) times "
            "alpha_init_value."
        )
    official = {"alpha": torch.tensor([0.3]), "weight": torch.randn(8), "bias": torch.randn(8)}
    try:
        layer.load_state_dict(official)
    except Exception as e:
        fail(f"DyT(8) could not load an official DynamicTanh(8)'s state_dict: {e}")
    for name, value in official.items():
        expect_close(
            torch.as_tensor(getattr(layer, name)).detach(),
            value,
            given="DyT(8) after loading an official DynamicTanh(8)'s state_dict",
            what=name,
            judge_dtype=False,
        )


@pytest.mark.parity
def test_computes_in_float64(kata, device):
    """a float64 input is computed in float64, not rounded through float32

    In float64 the layer keeps 16 significant digits; a tanh computed on a float32 copy keeps 7,
    whatever dtype the result is cast back to.

    With the module in float64, every operation on x stays in float64: upcast only what needs
    it, never down.
    """
    layer = kata.DyT(8).to(device, torch.float64)
    x = torch.randn(4, 8, dtype=torch.float64, device=device)
    expect_float64_arithmetic(layer, x, given=f"DyT(8).to(float64) on x {shape_of(x)}")


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_half_precision(kata, device, dtype):
    """float16 and bfloat16 inputs return their own dtype, the module in the same dtype

    A model run in half precision casts its DyT layers too, and expects half-precision
    activations back: an output upcast to float32 doubles the memory of every activation after
    it. The tanh may be computed in float32 for accuracy, as long as the result is cast back.

    y in x's dtype, within half precision's rounding of weight · tanh(α · x) + bias.
    """
    name = dtype_name(dtype)
    layer = kata.DyT(8).to(device, dtype)
    weight, bias = nonzero_values(8, device="cpu", dtype=dtype), torch.randn(8).to(dtype)
    place(layer, alpha=0.5, weight=weight, bias=bias)
    x = torch.randn(4, 8, device=device).to(dtype)
    want = formula(x, 0.5, weight, bias, True).to(dtype)
    given = f"DyT(8).to({name}) on x {shape_of(x)}"
    expect_close(run(layer, x), want, given=given, rtol=2e-2, atol=2e-2)


def expect_tanh_at_unit_scale(kata, device) -> None:
    """With α = 1, weight ones and bias zeros the layer is tanh(x) itself, wherever α and the
    weight go: a layer that is not (another squashing function) fails the formula's check, not
    the check of α's or the weight's place, which could not tell it apart."""
    layer = kata.DyT(8).to(device)
    place(layer, alpha=1.0, weight=torch.ones(8), bias=torch.zeros(8))
    x = torch.randn(4, 8, device=device) * 2
    if not values_close(run(layer, x), torch.tanh(x.double())):
        fail_for(
            "test_forward_matches_formula",
            f"DyT(8) with α = 1, weight ones and bias zeros, on x {shape_of(x)}: the output is "
            "not tanh(x), so the function itself is not the tanh.",
        )


def run(layer, x):
    """layer(x) on a copy of x where x needs no gradient: a layer that writes into its input
    (test_input_unmodified's mistake) is compared with the formula on the x it was handed."""
    return layer(x if x.requires_grad else x.clone())


def place(layer, *, alpha, weight, bias):
    """Write α (in every element it has), weight and bias into the learner's layer, so that a
    check sees the values it chose: a wrong initial value is test_initial_values' mistake, a
    missing or misshapen parameter test_alpha_is_one_learnable_scalar's or its."""
    with torch.no_grad():
        held = getattr(layer, "alpha", MISSING)
        if isinstance(held, torch.Tensor):
            held.fill_(alpha)
        elif isinstance(held, int | float):
            layer.alpha = alpha
        else:
            fail_for("test_alpha_is_one_learnable_scalar", "the layer has no attribute alpha, α.")
        for name, value in (("weight", weight), ("bias", bias)):
            held = getattr(layer, name, None)
            if not isinstance(held, torch.Tensor) or held.shape != value.shape:
                fail_for(
                    "test_initial_values",
                    f"the layer's {name} is no tensor of shape {tuple(value.shape)}.",
                )
            held.copy_(value)


def formula(x, alpha, weight, bias, channels_last):
    """weight · tanh(α · x) + bias in float64, the channels last or at dim 1."""
    shape = (-1,) if channels_last else (-1, 1, 1)
    w, b = (t.to(x.device, torch.float64).reshape(shape) for t in (weight, bias))
    alpha = alpha.double() if isinstance(alpha, torch.Tensor) else alpha
    return w * torch.tanh(alpha * x.double()) + b


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your DyT against nn.LayerNorm, the layer it replaces."""
    rows, d = (8192, 4096) if device.type == "cuda" else (2048, 1024)
    mine = kata.DyT(d).to(device)
    ref = torch.nn.LayerNorm(d).to(device)
    x = torch.randn(rows, d, device=device, requires_grad=True)
    return PerfCase.of_layers(
        f"DyT({d}) on x {shape_of(x)}", mine, ref, x, builtin_name="nn.LayerNorm"
    )
