"""Hidden checks for the spectral normalization kata, against torch's own two implementations.

torch.nn.utils.parametrizations.spectral_norm updates u from v and then v from u; the older
torch.nn.utils.spectral_norm (a forward pre-hook) updates v first. Both are the power method,
and the interview core accepts either order: a check that follows the iteration computes both
from the same u and v, placed in the learner's buffers, in float64. Power iteration's estimate
depends on u's random start, so the core never compares with torch's own draws: it places its
own u and v in the buffers, or checks what holds for any start (σ never exceeds the top
singular value, and converges to it). Torch parity (@pytest.mark.parity): the start torch
draws after the same seed, eps exactly as F.normalize, a 1-D weight, the order of the other
dims for dim=2, n_power_iterations < 1 refused, and ConvTranspose's default dim.
"""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize
from torch.nn.utils import spectral_norm as hook_spectral_norm
from torch.nn.utils.parametrizations import _SpectralNorm
from torch.nn.utils.parametrizations import spectral_norm as torch_spectral_norm
from torch.nn.utils.spectral_norm import SpectralNorm as SpectralNormHook

from norm_katas.checks import (
    MISSING,
    PerfCase,
    Suite,
    dtype_name,
    expect_close,
    expect_from_scratch,
    expect_function_follows_device,
    expect_grads_close,
    expect_raises,
    expect_state_dict_round_trip,
    expect_tensor,
    fail,
    fail_for,
    shape_of,
    values_close,
)

SUITE = Suite()

F64 = torch.float64
# An SVD or an eigensolver gives σ exactly: ATen's names, which the functions the learner
# calls (svdvals, matrix_norm(W, 2), torch.linalg.norm(W, 2), svd_lowrank, ...) all reach.
BUILTIN_SPECTRAL = frozenset({
    "svd", "linalg_svd", "_linalg_svd", "svdvals", "linalg_svdvals", "linalg_eig", "eig",
    "linalg_eigvals", "linalg_eigh", "_linalg_eigh", "linalg_eigvalsh", "lobpcg", "svd_lowrank",
    "pca_lowrank",
})  # fmt: skip
FROM_SCRATCH = (
    "The kata is σ by power iteration, from matrix-vector products and norms, as you would "
    "at a whiteboard: an SVD or an eigensolver (svdvals, matrix_norm(W, 2) and "
    "torch.linalg.norm(W, 2) all run one) computes σ exactly, at a cost that power iteration "
    "avoids."
)


# -- the interview core ----------------------------------------------------------------------


def test_power_iteration_step(kata, device):
    """one training forward runs one power step: u ← normalize(W v), then v ← normalize(Wᵀ u)

    Power iteration alternates the two products: W v points u towards the top left singular
    vector, and Wᵀ u points v towards the top right one. v lives in the input space, of length
    w, so it comes from Wᵀ, the transpose; W u only has the right length for a square W.

    With the stored u and v: u ← W v / ‖W v‖, then v ← Wᵀ u / ‖Wᵀ u‖ (or v first, then u, as
    torch's older hook does), both without a gradient and kept in the buffers.
    """
    # Wide, then square: the square one catches mistakes that only a square W lets run.
    for shape in ((3, 5), (4, 4)):
        w = torch.randn(shape, dtype=F64, device=device)
        u0, v0 = unit(shape[0], device), unit(shape[1], device)
        given = f"SpectralNorm(W) with W {shape_of(w)}, u and v set, one training forward"
        sn = holding(made(kata, w), u0, v0, given=given)
        output(sn, w)
        u1, v1 = read(sn, given=given)
        if values_close(u1, u0) and values_close(v1, v0):
            fail_for(
                "test_training_forward_iterates",
                f"{given}: u and v are as they were, so the forward ran no power step.",
            )
        # Directions only: whether the vectors have unit length is test_unit_vectors'.
        got = (F.normalize(u1, dim=0), F.normalize(v1, dim=0))
        options = [power_steps(w, u0, v0, 1, v_first=first) for first in (False, True)]
        if any(values_close(got[0], u) and values_close(got[1], v) for u, v in options):
            continue
        u, v = options[0]  # said in torch's order
        which, have, want = ("u", got[0], u) if not values_close(got[0], u) else ("v", got[1], v)
        formula = "W v / ‖W v‖" if which == "u" else "Wᵀ u / ‖Wᵀ u‖ (with the new u)"
        fail(
            f"{given}: {which} should point along {formula} = {shown(want)}, got "
            f"{which} / ‖{which}‖ = {shown(have)} (nor does it match v first, then u, the "
            "order of torch's older hook)."
        )


def test_buffers(kata):
    """u and v are buffers _u (out,) and _v (in,), not parameters, and carry no autograd history

    u and v are state, not learned: buffers go into the state_dict and move with .to(), but
    no optimizer updates them and no weight decay shrinks them. torch names them _u and _v.
    Power steps run in __init__ while autograd records leave them computed from the weight: a
    backward would then reach the weight through them.

    For W of shape (h, w): _u holds h values (the output side), _v holds w (the input side),
    each registered with register_buffer, and computed with autograd off (a no-grad block).
    """
    w = nn.Parameter(torch.randn(3, 5))  # as a layer's weight is: autograd records its uses
    given = "SpectralNorm(W) with W an nn.Parameter (3, 5) float32"
    sn = kata.SpectralNorm(w)
    params = dict(sn.named_parameters())
    buffers = dict(sn.named_buffers())
    for name, size in (("_u", 3), ("_v", 5)):
        if name in params:
            fail(
                f"{given}: {name} is an nn.Parameter: an optimizer built from "
                "model.parameters() would update it (and weight decay shrink it) besides the "
                "power method. Register it with register_buffer."
            )
        if name not in buffers:
            value = getattr(sn, name, MISSING)
            if isinstance(value, torch.Tensor):
                fail(
                    f"{given}: {name} is a plain tensor attribute: the state_dict does not "
                    "save it and .to() does not move it. Register it with register_buffer."
                )
            fail(
                f"{given} has no buffer {name} (its buffers: {sorted(buffers) or 'none'}): "
                "name u and v _u and _v, as torch's SpectralNorm does, so that checkpoints "
                "load both ways."
            )
        if tuple(buffers[name].shape) != (size,):
            fail(
                f"{given}: {name} has shape {tuple(buffers[name].shape)}, expected ({size},): "
                "u has one value per row of W (3), v one per column (5)."
            )
        if buffers[name].grad_fn is not None or buffers[name].requires_grad:
            fail(
                f"{given}: {name} carries autograd history (grad_fn "
                f"{type(buffers[name].grad_fn).__name__}): it was computed from the weight "
                "while autograd recorded, so a backward reaches the weight through it, and "
                "fails once a power step updates it in place. Compute u and v under "
                "torch.no_grad()."
            )


def test_state_dict_round_trip(kata):
    """a spectral-normed Linear's state_dict loads from torch's and into it

    A checkpoint of a model trained with torch's spectral_norm must load into yours, u and v
    included, and the other way round.

    register_parametrization keeps the weight as parametrizations.weight.original and your
    module as parametrizations.weight.0, whose buffers _u and _v are saved with it.
    """
    given = "spectral_norm(nn.Linear(5, 3))"
    mine = normalized_layer(kata, nn.Linear(5, 3), given=given)
    expect_state_dict_round_trip(mine, torch_spectral_norm(nn.Linear(5, 3)), given=given)


def test_from_scratch(kata, device):
    """σ by power iteration, not an SVD, an eigensolver or torch's spectral_norm

    The exercise is the power method: torch.linalg.svdvals, matrix_norm(W, 2) and torch's own
    spectral_norm compute the answer for you.

    Matrix-vector products, norms and one dot product per step are all it takes: σ ≈ uᵀ W v.
    """
    w = torch.randn(3, 5, device=device)

    def run():
        sn = kata.SpectralNorm(w.detach().cpu(), n_power_iterations=2).to(device)
        return sn(w)

    expect_from_scratch(run, BUILTIN_SPECTRAL, advice=FROM_SCRATCH, who="SpectralNorm")
    layer = nn.Linear(5, 3).to(device)
    given = "spectral_norm(nn.Linear(5, 3))"
    expect_from_scratch(
        lambda: normalized_layer(kata, layer, given=given),
        BUILTIN_SPECTRAL,
        advice=FROM_SCRATCH,
        who="spectral_norm",
    )
    x = torch.randn(2, 5, device=device)
    expect_from_scratch(
        lambda: layer(x),
        BUILTIN_SPECTRAL,
        module=layer,
        forbidden_modules=(_SpectralNorm,),
        advice=FROM_SCRATCH,
        who=f"{given}'s forward",
    )
    for hook in layer._forward_pre_hooks.values():
        if isinstance(hook, SpectralNormHook):
            fail(f"{given} registers torch's own spectral norm hook. {FROM_SCRATCH}")


def test_follows_weight(kata, device):
    """u and v are made on the weight's device, in its dtype

    A float64 weight, or one on the GPU, meets u and v in every matrix-vector product: they
    must be made where the weight is, in its dtype, or the product fails.

    Draw u and v from the weight itself (a new tensor of the weight's kind), or give the
    weight's dtype and device to the function that draws them.
    """
    w = torch.randn(3, 5, dtype=F64)
    given = "SpectralNorm(W) with W (3, 5) float64"
    advice = (
        "draw u and v with weight.new_empty(n).normal_(), or pass dtype=weight.dtype, "
        "device=weight.device."
    )
    try:
        sn = kata.SpectralNorm(w)
        out = output(sn, w)
    except RuntimeError as e:
        if "dtype" not in str(e) and "scalar type" not in str(e):
            raise
        said = str(e).splitlines()[0]
        fail(f"{given} raised: {said}. u and v must be in the weight's dtype: {advice}")
    for name, t in zip(("_u", "_v"), vectors(sn, given=given), strict=True):
        if t.dtype != F64:
            fail(f"{given}: {name} is {dtype_name(t.dtype)}, not float64: {advice}")
    if out.dtype != F64:
        fail(f"{given}: the output is {dtype_name(out.dtype)}, not float64.")
    expect_function_follows_device(
        lambda weight: kata.SpectralNorm(weight)(weight),
        torch.randn(3, 5),
        device=device,
        given="SpectralNorm(W)(W)",
    )


def test_unit_vectors(kata, device):
    """u and v are unit vectors, at the start and after every step

    σ = uᵀ W v is the top singular value only for unit u and v: a longer u scales σ by its
    length, and the power step's vectors grow or shrink with ‖W‖ unless they are normalized.

    Divide each new vector by its norm: u ← W v / ‖W v‖, v ← Wᵀ u / ‖Wᵀ u‖; the random start
    too.
    """
    # A small weight: its products are shorter than 1, so only normalizing makes them unit.
    w = torch.randn(3, 5, dtype=F64, device=device) * 0.1
    given = "SpectralNorm(W) with W = 0.1 · randn (3, 5)"
    for name, t in zip(("_u", "_v"), read(made(kata, w), given=given), strict=True):
        if abs(t.norm().item() - 1) > 1e-5:
            fail(f"{given}: at the start, ‖{name}‖ = {t.norm().item():.6g}, expected 1.")
    sn = holding(made(kata, w), unit(3, device), unit(5, device), given=given)
    for step in (1, 2):
        output(sn, w)
        for name, t in zip(("_u", "_v"), read(sn, given=given), strict=True):
            if abs(t.norm().item() - 1) > 1e-6:
                fail(
                    f"{given}, after {step} training forward(s): ‖{name}‖ = "
                    f"{t.norm().item():.6g}, expected 1: normalize it at every step."
                )


def test_training_forward_iterates(kata, device):
    """every training forward runs the power method: u and v move, not only at the start

    The estimate of σ follows the weight as it trains only if the power method runs on every
    training forward: u and v from the start alone describe the initial weight.

    In training mode, before computing σ: n_power_iterations steps, each u ← normalize(W v),
    v ← normalize(Wᵀ u), kept in the buffers.
    """
    w = with_singular_values(3, 5, (2.0, 1.8, 1.0), device)  # slow: every step moves u and v
    given = "SpectralNorm(W) with W (3, 5), u and v set, in training mode"
    sn = holding(made(kata, w), unit(3, device), unit(5, device), given=given)
    before = read(sn, given=given)
    for forward in ("first", "second"):
        output(sn, w)
        after = read(sn, given=given)
        if all(values_close(a, b) for a, b in zip(after, before, strict=True)):
            fail(
                f"{given}: the {forward} forward left u and v as they were "
                f"(u = {shown(after[0])}): run n_power_iterations steps of the power method "
                "in every training forward, and keep the new u and v in the buffers."
            )
        before = after


def test_n_power_iterations(kata, device):
    """n_power_iterations=3 runs three power steps per training forward

    Each training forward refines u and v by n_power_iterations steps: one forward with three
    does what three forwards with one do.

    In training mode: repeat u ← normalize(W v), v ← normalize(Wᵀ u) n_power_iterations times
    before σ = uᵀ W v.
    """
    # Against the layer's own single steps: what a step computes is other checks' business.
    w = with_singular_values(3, 5, (2.0, 1.8, 1.0), device)
    u0, v0 = unit(3, device), unit(5, device)
    given = "SpectralNorm(W, n_power_iterations=3) with W (3, 5), u and v set"
    three = holding(made(kata, w, n_power_iterations=3), u0, v0, given=given)
    once = holding(made(kata, w), u0, v0, given=given)
    out = output(three, w)
    expected = None
    for _ in range(3):
        expected = output(once, w)
    u3, v3 = read(three, given=given)
    u1, v1 = read(once, given=given)
    if not (values_close(u3, u1) and values_close(v3, v1)):
        fail(
            f"{given}: after one training forward, u = {shown(u3)}; three forwards of your "
            f"SpectralNorm(W, n_power_iterations=1) give u = {shown(u1)}. Run the power step "
            "n_power_iterations times per training forward."
        )
    if not values_close(out, expected) and not values_close(expected, w / (u1 @ w @ v1)):
        # σ is not uᵀ W v of the new vectors even with one step: another check's mistake.
        fail_for(
            "test_divides_by_sigma",
            f"{given}: the outputs differ, and your SpectralNorm(W, n_power_iterations=1)'s "
            "output is not W / (uᵀ W v) of its own u and v after the step either, which this "
            "check compares them through.",
        )
    expect_close(
        out, expected.detach(), given=f"{given}, against three forwards with one step each"
    )


def test_no_iterations_in_eval(kata, device):
    """eval mode runs no power step: u and v stay, and σ = uᵀ W v uses them as stored

    At inference the estimate must not move: a model evaluated twice gives the same outputs,
    and a checkpoint's u and v are the ones it was validated with.

    In eval mode, when the module is not training, skip the power method: σ = uᵀ W v with the
    stored u and v.
    """
    w = with_singular_values(3, 5, (2.0, 1.8, 1.0), device)
    u0, v0 = power_steps(w, unit(3, device), unit(5, device), 2)  # σ > 0 from these
    given = "SpectralNorm(W).eval() with W (3, 5), u and v set"
    sn = holding(made(kata, w), u0, v0, given=given)
    sn.eval()
    out = output(sn, w)
    u1, v1 = read(sn, given=given)
    if not (values_close(u1, u0) and values_close(v1, v0)):
        fail(
            f"{given}: the forward changed u from {shown(u0)} to {shown(u1)}: in eval mode "
            "run no power step (check self.training)."
        )
    # The premise: the layer divides by uᵀ W v of its own vectors in training.
    trained = holding(made(kata, w), u0, v0, given=given)
    t_out = output(trained, w)
    ut, vt = read(trained, given=given)
    if not values_close(t_out, w / (ut @ w @ vt)):
        fail_for(
            "test_divides_by_sigma",
            f"{given}: in training mode the output is not W / (uᵀ W v) of the layer's own u "
            "and v; this check reads eval's σ off that.",
        )
    sigma = (u0 @ w @ v0).item()
    expect_close(
        out,
        w / sigma,
        given=f"{given}, against W / (uᵀ W v) = W / {sigma:.6g}, with the stored u and v",
        judge_dtype=False,
    )


def test_divides_by_sigma(kata, device):
    """the weight is divided by σ = uᵀ W v, the top singular value's estimate, not ‖W‖_F

    σ(W), the spectral norm, is the largest singular value: the most W stretches a unit
    vector. The Frobenius norm √(Σ Wᵢⱼ²) is √(Σ σᵢ²), larger, so it shrinks the layer below
    1-Lipschitz.

    After the power step, σ = uᵀ W v with the new u and v, and the output is weight / σ.
    """
    w = torch.randn(3, 5, dtype=F64, device=device) * 2
    given = "SpectralNorm(W) with W (3, 5), u and v set, one training forward"
    sn = holding(made(kata, w), unit(3, device), unit(5, device), given=given)
    out = output(sn, w)
    u1, v1 = read(sn, given=given)
    sigma = (u1 @ w @ v1).item()
    if values_close(out, w / sigma):
        return
    dot = (out.detach().double() * w).sum().item()
    note = ""
    if dot:
        divisor = (w * w).sum().item() / dot
        note = f" Your output is W / {divisor:.6g}"
        if abs(divisor - w.norm().item()) < 1e-4 * abs(divisor):
            note += ", the Frobenius norm ‖W‖_F: σ is the largest singular value, uᵀ W v"
        note += "."
    fail(
        f"{given}: the output should be W / σ with σ = uᵀ W v = {sigma:.6g} (your u and v "
        f"after the step); {first_difference(out.detach(), w / sigma)}.{note}"
    )


def test_gradient_through_sigma_only(kata, device):
    """the gradient reaches the weight through σ = uᵀ W v with u and v held constant

    torch treats u and v as constants for autograd: the power step runs without a gradient
    and σ uses copies of the vectors. Backpropagating through the iterations, or detaching σ,
    changes the gradient that trains the weight.

    With σ = uᵀ W v and u, v constant: ∂σ/∂W = u vᵀ, so for the output W / σ and an upstream
    gradient G, the weight's gradient is G / σ − (⟨G, W⟩ / σ²) u vᵀ.
    """
    # Slow convergence, u and v far from the singular vectors: there the paths differ.
    w = with_singular_values(3, 5, (2.0, 1.8, 1.0), device)
    given = "SpectralNorm(W) with W (3, 5), u and v set, one training forward and backward"
    sn = holding(made(kata, w), unit(3, device), unit(5, device), given=given)
    leaf = w.clone().requires_grad_()
    out = output(sn, leaf)
    u, v = read(sn, given=given)
    sigma = u @ w @ v
    if not values_close(out, w / sigma):
        fail_for(
            "test_divides_by_sigma",
            f"{given}: the output is not W / (uᵀ W v) of the layer's own u and v, which this "
            "check's gradient is the gradient of.",
        )
    if not out.requires_grad:
        fail(f"{given}: the output carries no gradient: keep weight / σ in the graph.")
    g = torch.randn_like(w)
    out.backward(g)
    expected = g / sigma - (g * w).sum() / sigma**2 * torch.outer(u, v)
    have = leaf.grad
    if have is None:
        fail(f"{given}: no gradient reached the weight.")
    if values_close(have, g / sigma):
        fail(
            f"{given}: the weight's gradient is G / σ, as if σ were a constant: σ = uᵀ W v "
            "depends on W, so keep it in the graph (only u and v are constants)."
        )
    if not values_close(have, expected):
        fail(
            f"{given}: the weight's gradient differs from G / σ − (⟨G, W⟩ / σ²) u vᵀ, which "
            f"holds u and v constant ({first_difference(have, expected)}): run the power step "
            "under torch.no_grad() and use clones of u and v in σ, so that no gradient flows "
            "through them."
        )


def test_two_forwards_then_backward(kata, device):
    """two training forwards, then one backward through both, work (as D(real) and D(fake))

    A GAN's discriminator sees the real and the fake batch in two forwards before one
    backward. The second forward's power step updates u and v; the first forward's backward
    still needs the values it used.

    Keep the new u and v in the buffers, in place if you like, but compute σ from clones of
    them: a later in-place update must not change a tensor an earlier graph saved.
    """
    w = torch.randn(3, 5, dtype=F64, device=device)
    given = "SpectralNorm(W) with W (3, 5): two training forwards, then one backward"
    sn = holding(made(kata, w), unit(3, device), unit(5, device), given=given)
    leaf = w.clone().requires_grad_()
    first, second = output(sn, leaf), output(sn, leaf)
    loss = (first * torch.randn_like(w)).sum() + (second * torch.randn_like(w)).sum()
    try:
        loss.backward()
    except RuntimeError as e:
        said = str(e).splitlines()[0]
        fail(
            f"{given}: the backward failed ({said}). The second forward updated u and v in "
            "place after the first had saved them: compute σ from u.clone() and v.clone()."
        )


def test_conv_weight_reshape(kata, device):
    """a Conv2d weight (out, in, kh, kw) is seen as the matrix (out, in·kh·kw)

    A convolution's weight has four dims; the matrix whose σ is taken keeps the output
    channels as rows and flattens everything else into columns, so that u has one value per
    output channel.

    W = weight reshaped to (out, −1): h = out, w = in·kh·kw.
    """
    # Against the layer's own output for the matrix itself: what it computes is other checks'
    # business, that it sees the conv weight as that matrix is this one's.
    weight = torch.randn(4, 2, 3, 3, dtype=F64, device=device)
    given = "SpectralNorm(weight) with a Conv2d weight (4, 2, 3, 3), u and v set"
    u0, v0 = unit(4, device), unit(18, device)
    conv = made(kata, weight)
    shapes = tuple(tuple(t.shape) for t in vectors(conv, given=given))
    if shapes != ((4,), (18,)):
        fail(
            f"{given}: u and v have shapes {shapes[0]} and {shapes[1]}, expected (4,) and "
            "(18,): reshape the weight to (out, -1) = (4, 18), one row per output channel."
        )
    holding(conv, u0, v0, given=given)
    flat = holding(made(kata, matrix(weight)), u0, v0, given=given)
    out = output(conv, weight)
    expected = output(flat, matrix(weight)).detach()
    given += ", against your SpectralNorm of the weight reshaped to (4, 18)"
    mine_uv, flat_uv = read(conv, given=given), read(flat, given=given)
    for name, have, want in zip(("u", "v"), mine_uv, flat_uv, strict=True):
        if not values_close(have, want):
            fail(
                f"{given}: after one training forward, {name} = {shown(have)}, expected "
                f"{shown(want)}: reshape the weight to (out, -1) = (4, 18)."
            )
    expect_close(out, expected.reshape(weight.shape), given=given, equal_nan=False)


def test_dim_moved_to_front(kata, device):
    """dim=1 moves that dim to the front before flattening (ConvTranspose's output channels)

    A ConvTranspose2d weight is (in, out, kh, kw): its output channels are dim 1. The matrix
    keeps them as rows, in order, with every other dim flattened into the columns; a reshape to
    (out, −1) without moving the dim mixes up entries of different channels.

    W = weight with dim moved to the front (a permute, or movedim), then flattened to
    (weight.shape[dim], −1).
    """
    probe = made(kata, torch.randn(4, 2, 3, 3, dtype=F64, device=device))
    shapes = tuple(tuple(t.shape) for t in vectors(probe, given="SpectralNorm(weight)"))
    if shapes != ((4,), (18,)):
        fail_for(
            "test_conv_weight_reshape",
            f"SpectralNorm(weight) with a Conv2d weight (4, 2, 3, 3): u and v have shapes "
            f"{shapes[0]} and {shapes[1]}, not (4,) and (18,); this check moves dims before "
            "that reshape.",
        )
    for what, shape in (("a ConvTranspose2d weight", (2, 4, 3, 3)), ("a Linear weight", (3, 5))):
        weight = torch.randn(shape, dtype=F64, device=device)
        expect_moved_to_front(kata, weight, 1, what=f"{what} {shape}", check=CHECK_DIM)


def test_eps_used(kata, device):
    """eps bounds every normalization: a vector shorter than eps is not blown up to length 1

    eps keeps x / ‖x‖ finite when x is (nearly) zero, a weight trained towards zero say: torch
    divides by max(‖x‖, ε), so a vector shorter than ε keeps its small length instead of
    becoming a unit vector, and a zero vector stays zero instead of NaN.

    normalize(x) = x / max(‖x‖, ε), in both steps of the power method.
    """
    w = with_singular_values(3, 5, (1e-3, 5e-4, 2e-4), device)  # ‖W v‖ ≤ 1e-3, ten times below ε
    given = "SpectralNorm(W, eps=1e-2) with ‖W‖₂ = 1e-3, u and v set, one training forward"
    sn = holding(made(kata, w, eps=1e-2), unit(3, device), unit(5, device), given=given)
    before = read(sn, given=given)
    output(sn, w)
    after = read(sn, given=given)
    if all(values_close(a, b) for a, b in zip(after, before, strict=True)):
        fail_for(
            "test_training_forward_iterates",
            f"{given}: u and v are as they were, so the forward ran no power step to normalize.",
        )
    for name, t in zip(("u", "v"), after, strict=True):
        if t.norm().item() > 0.5:
            fail(
                f"{given}: ‖{name}‖ = {t.norm().item():.4g}, where the vector normalized was "
                "at most 1e-3 long: with eps = 1e-2 it should stay short (‖x‖ / max(‖x‖, ε) "
                "≤ 0.1). Use eps in the normalization."
            )


def test_spectral_norm_function(kata, device):
    """spectral_norm(module, name=...) registers your SpectralNorm on that parameter

    spectral_norm is the entry point: it builds your SpectralNorm from the named parameter,
    with the arguments given, registers it as that parameter's parametrization and returns
    the module.

    Build your SpectralNorm from the parameter called name, with n_power_iterations, dim and
    eps as given, register it under that name with torch's register_parametrization, and
    return the module itself.
    """

    class Gated(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(3, 5))
            self.gate = nn.Parameter(torch.randn(4, 6))

    layer = Gated().to(device)
    gate = layer.gate.detach().clone()
    given = "spectral_norm(module, name='gate', n_power_iterations=2, dim=1)"
    normalized_layer(kata, layer, given=given, name="gate", n_power_iterations=2, dim=1)
    if parametrize.is_parametrized(layer, "weight"):
        fail(f"{given} normalized module.weight: normalize the parameter called name.")
    sn = parametrization(layer, "gate", given=given)
    if not isinstance(sn, kata.SpectralNorm):
        fail(f"{given} registered a {type(sn).__name__}, not your SpectralNorm.")
    u0, v0 = unit(6, device).float(), unit(4, device).float()
    holding(sn, u0, v0, given=given, owner="test_spectral_norm_function")
    twin = holding(made(kata, gate, n_power_iterations=2, dim=1), u0, v0, given=given)
    given += ", against your SpectralNorm(gate, n_power_iterations=2, dim=1)"
    expect_close(layer.gate, output(twin, gate).detach(), given=given, what="module.gate")
    # The defaults: one step per forward, eps = 1e-12 (a small weight, whose products are
    # shorter than 1: a larger eps would leave them unnormalized).
    linear = nn.Linear(5, 3).to(device)
    with torch.no_grad():
        linear.weight.mul_(0.1)
    weight = linear.weight.detach().clone()
    given = "spectral_norm(nn.Linear(5, 3)), its defaults"
    sn = parametrization(normalized_layer(kata, linear, given=given), "weight", given=given)
    u0, v0 = unit(3, device).float(), unit(5, device).float()
    holding(sn, u0, v0, given=given)
    twin = holding(made(kata, weight), u0, v0, given=given)
    given += ", against your SpectralNorm(weight) with its defaults"
    expect_close(linear.weight, output(twin, weight).detach(), given=given, what="module.weight")


@pytest.mark.broad
def test_converges_to_top_singular_value(kata, device):
    """σ stays at most the top singular value and converges to it: W / σ has spectral norm 1

    For unit u and v, uᵀ W v is at most the largest singular value, whatever u and v are;
    the power method brings them to the top singular vectors, where it is equal.

    After enough training forwards, σ = uᵀ W v = σ₁(W), and ‖weight / σ‖₂ = 1.
    """
    w = with_singular_values(4, 6, (3.0, 1.5, 1.0, 0.5), device)  # σ₂/σ₁ = 0.5
    given = "SpectralNorm(W) with W (4, 6), σ₁(W) = 3, u and v set"
    sn = holding(made(kata, w), unit(4, device), unit(6, device), given=given)
    for step in range(1, 31):
        out = output(sn, w).detach().double()
        norm = torch.linalg.matrix_norm(out, ord=2).item()
        if norm < 1 - 1e-6:  # float32 rounding of a correct estimate stays far within
            fail(
                f"{given}: after {step} training forward(s), ‖output‖₂ = {norm:.6g}, below 1: "
                f"σ = {3 / norm:.6g} exceeds σ₁(W) = 3, which uᵀ W v of unit vectors cannot."
            )
    if abs(norm - 1) > 1e-5:
        fail(
            f"{given}: after 30 training forwards, ‖output‖₂ = {norm:.8g}, expected 1: σ = "
            f"{3 / norm:.8g} should have converged to σ₁(W) = 3."
        )


@pytest.mark.broad
def test_forward_matches_torch(kata, device):
    """a spectral-normed Linear and Conv2d match torch's, in training and eval

    Your spectral_norm holding torch's weight, u and v gives torch's outputs, step after step,
    and then in eval mode.

    Training: n_power_iterations power steps, then σ = uᵀ W v and weight / σ; eval: σ from the
    stored u and v.
    """
    # float64 and two steps on the Linear only: a float64 convolution is slow on the CPU.
    for dtype, n, layers in ((torch.float32, 1, LAYERS), (F64, 2, LAYERS[:1])):
        for name, make, x_shape in layers:
            layer = make()
            ref = torch_spectral_norm(copy.deepcopy(layer), n_power_iterations=n)
            given = f"spectral_norm({name}, n_power_iterations={n}) in {dtype_name(dtype)}"
            mine = learner_like(kata, layer, ref, given=given, n=n)
            hook = torch_hook(layer, ref, n)  # the older order, from the same u and v
            xs = [torch.randn(x_shape, dtype=dtype, device=device) for _ in MODES]
            have = steps(mine.to(device, dtype), xs)
            want = steps(ref.to(device, dtype), xs)
            if all(values_close(h, w) for h, w in zip(have, want, strict=True)):
                continue
            older = steps(hook.to(device, dtype), xs)
            if all(values_close(h, w) for h, w in zip(have, older, strict=True)):
                continue
            for mode, h, w in zip(MODES, have, want, strict=True):
                expect_close(h, w, given=f"{given}, {mode} forward")


@pytest.mark.broad
def test_gradients_match(kata, device):
    """gradients of the input, weight and bias match torch's

    Autograd does the backward: σ stays in the graph, u and v do not.

    The weight's gradient is G / σ − (⟨G, W⟩ / σ²) u vᵀ, pulled back through the layer.
    """
    for name, make, x_shape in LAYERS:
        layer = make()
        ref = torch_spectral_norm(copy.deepcopy(layer))
        given = f"spectral_norm({name}) in float64, one training forward and backward"
        mine = learner_like(kata, layer, ref, given=given, n=1).to(device, F64)
        hook = torch_hook(layer, ref, 1).to(device, F64)  # the older order
        x = torch.randn(x_shape, dtype=F64, device=device)
        want = grads_of(ref.to(device, F64), ORIGINAL, x, None)
        have = grads_of(mine, ORIGINAL, x, want["g"], given=given)
        names = ("input", "weight", "bias")
        if all(have[k] is not None and values_close(have[k], want[k]) for k in names):
            continue
        older = grads_of(hook, "weight_orig", x, want["g"])
        if all(have[k] is not None and values_close(have[k], older[k]) for k in names):
            continue
        expect_grads_close({k: have[k] for k in names}, {k: want[k] for k in names}, given=given)


# -- torch parity -----------------------------------------------------------------------------


@pytest.mark.parity
def test_initialised_like_torch(kata):
    """after the same torch.manual_seed, u and v start as torch's: drawn, then 15 power steps

    torch draws u then v from a standard normal, normalizes them, then runs 15 steps of the
    power method at construction, so that the first forwards already use a good estimate of
    σ; seeded alike, your buffers are torch's.

    u ← normalize(z) for z a standard normal draw of h values in the weight's dtype and on its
    device, then v likewise with w values; then 15 steps of u ← normalize(W v), v ←
    normalize(Wᵀ u).
    """
    # Slow convergence (σ₂/σ₁ = 0.9): 14 or 16 steps differ from 15 visibly.
    w = with_singular_values(3, 5, (2.0, 1.8, 1.0), "cpu").float()
    given = "SpectralNorm(W) with W (3, 5) float32, after torch.manual_seed(7)"
    torch.manual_seed(7)
    ref = _SpectralNorm(w)
    torch.manual_seed(7)
    mine = kata.SpectralNorm(w)
    for name in ("_u", "_v"):
        have = getattr(mine, name, MISSING)
        if not isinstance(have, torch.Tensor):
            fail_for("test_buffers", f"{given} has no tensor {name}.")
        expect_close(
            have.detach(),
            getattr(ref, name),
            given=f"{given}, against torch's _SpectralNorm(W) after the same seed",
            what=name,
            judge_dtype=False,
        )


@pytest.mark.parity
def test_eps_like_torch(kata, device):
    """eps as torch uses it, a floor on the norm as in F.normalize, not ε added to the norm

    F.normalize clamps the norm from below at ε; adding ε to the norm, as some GAN code does,
    gives the same unit vectors for ordinary weights but not where the norm is near ε.

    normalize(x) = x / max(‖x‖, ε) at every step.
    """
    w = with_singular_values(3, 5, (1e-3, 5e-4, 2e-4), device)
    u0, v0 = unit(3, device), unit(5, device)
    given = "SpectralNorm(W, eps=1e-2) with ‖W‖₂ = 1e-3, u and v set, one training forward"
    sn = holding(made(kata, w, eps=1e-2), u0, v0, given=given)
    output(sn, w)
    got = read(sn, given=given)
    options = [power_steps(w, u0, v0, 1, 1e-2, v_first=first) for first in (False, True)]
    if any(values_close(got[0], u) and values_close(got[1], v) for u, v in options):
        return
    u = options[0][0]
    fail(
        f"{given}: u = {shown(got[0])}, expected W v / max(‖W v‖, ε) = {shown(u)} "
        "(torch's F.normalize floors the norm at ε)."
    )


@pytest.mark.parity
def test_vector_weight(kata, device):
    """a 1-D weight (a bias) is divided by its norm: weight / max(‖weight‖, ε)

    A vector's spectral norm is its Euclidean norm, exactly: torch skips the power method and
    its buffers for a 1-D weight.

    weight / max(‖weight‖, ε), in training and eval mode alike: a zero vector stays zero.
    """
    b = torch.randn(6, dtype=F64, device=device) * 3
    given = "SpectralNorm(b) with a 1-D weight b (6,)"
    sn = made(kata, b)
    expected = b / b.norm()
    expect_close(output(sn, b), expected, given=f"{given}, training", judge_dtype=False)
    sn.eval()
    expect_close(output(sn, b), expected, given=f"{given}, eval", judge_dtype=False)
    # A vector shorter than eps is divided by eps: it keeps its small length.
    short = torch.randn(6, dtype=F64, device=device) * 0.1
    given = "SpectralNorm(b, eps=1.0) with b = 0.1 · randn(6), shorter than eps"
    got = output(made(kata, short, eps=1.0), short)
    expect_close(got, short / max(short.norm().item(), 1.0), given=given, judge_dtype=False)
    # A bias initialised to zeros: torch gives zeros back, where 0 / 0 would be NaN.
    zero = torch.zeros(6, device=device)
    given = "SpectralNorm(b) with b = zeros(6)"
    expect_close(output(made(kata, zero), zero), zero, given=given, equal_nan=False)
    layer = nn.Linear(5, 3).to(device)
    with torch.no_grad():
        layer.bias.zero_()
    given = "spectral_norm(nn.Linear(5, 3), name='bias') with the bias at zero"
    normalized_layer(kata, layer, given=given, name="bias")
    expect_close(layer.bias, zero[:3], given=given, what="module.bias", equal_nan=False)


@pytest.mark.parity
def test_dim_keeps_the_others_in_order(kata, device):
    """dim=2 moves that dim to the front and keeps the other dims in their order

    torch moves dim to the front with a permute and leaves the other dims in order, so that
    v's entries follow the weight's own layout and a checkpoint's v fits. Swapping dim with
    dim 0 is the same for dim 1, but for dim 2 it reorders the columns: the same σ in the end,
    another v on the way.

    W = weight with its dims in the order dim, then all the others as they were, flattened to
    (weight.shape[dim], −1).
    """
    weight = torch.randn(2, 3, 4, 2, dtype=F64, device=device)
    expect_moved_to_front(kata, weight, 2, what="a weight (2, 3, 4, 2)", check=CHECK_ORDER)


@pytest.mark.parity
def test_rejects_nonpositive_iterations(kata):
    """n_power_iterations < 1 raises ValueError

    With no power step the estimate never moves from its start: torch refuses
    n_power_iterations = 0 rather than train with a stale σ.

    Raise ValueError when n_power_iterations < 1, before anything is built.
    """
    w = torch.randn(3, 5)
    for n in (0, -1):
        expect_raises(
            ValueError,
            lambda n=n: kata.SpectralNorm(w, n_power_iterations=n),
            given=f"SpectralNorm(W, n_power_iterations={n})",
        )


@pytest.mark.parity
def test_conv_transpose_default_dim(kata):
    """spectral_norm of a ConvTranspose defaults to dim=1, its output channels

    A ConvTranspose's weight is (in, out, ...): torch's spectral_norm takes dim=1 for
    ConvTranspose1d, 2d and 3d, and dim=0 for every other module, so that u always lives in
    the output channels.

    dim = 1 if the module is a ConvTranspose1d, 2d or 3d, else 0, when dim is None.
    """
    # Weights (2, 4, *k) and (4, 2, *k): torch's u has 4 values for every one of them.
    for name, layer in (
        ("nn.ConvTranspose1d(2, 4, 3)", nn.ConvTranspose1d(2, 4, 3)),
        ("nn.ConvTranspose2d(2, 4, 3)", nn.ConvTranspose2d(2, 4, 3)),
        ("nn.ConvTranspose3d(2, 4, 3)", nn.ConvTranspose3d(2, 4, 3)),
        ("nn.Conv2d(2, 4, 3)", nn.Conv2d(2, 4, 3)),
    ):
        given = f"spectral_norm({name})"
        sn = parametrization(normalized_layer(kata, layer, given=given), "weight", given=given)
        shapes = tuple(tuple(t.shape) for t in vectors(sn, given=given))
        want = ((4,), (layer.weight.numel() // 4,))
        if shapes != want:
            fail(
                f"{given}: u and v have shapes {shapes[0]} and {shapes[1]}, torch's {want[0]} "
                f"and {want[1]}: dim defaults to 1 for a ConvTranspose1d, 2d or 3d, whose "
                "weight is (in, out, ...), and to 0 for any other module."
            )


# -- helpers: the maths, in float64 ----------------------------------------------------------


def unit(n, device):
    """A random unit vector of length n, float64."""
    return F.normalize(torch.randn(n, dtype=F64, device=device), dim=0)


def with_singular_values(h, w, values, device):
    """A random (h, w) float64 matrix whose singular values are `values`: from their gaps,
    how fast the power method converges (the second over the first, squared, per step)."""
    left, _ = torch.linalg.qr(torch.randn(h, h, dtype=F64, device=device))
    right, _ = torch.linalg.qr(torch.randn(w, w, dtype=F64, device=device))
    k = len(values)
    return left[:, :k] @ torch.diag(torch.tensor(values, dtype=F64, device=device)) @ right[:, :k].T


def matrix(weight, dim=0):
    """torch's W: dim moved to the front, the other dims flattened."""
    return weight.movedim(dim, 0).flatten(1)


def power_steps(w, u, v, n, eps=1e-12, *, v_first=False):
    """(u, v) after n steps of the power method on the matrix w, each vector divided by
    max(‖·‖, eps): u from v first, as torch.nn.utils.parametrizations does, or (v_first) v
    from u first, as torch.nn.utils.spectral_norm does."""
    for _ in range(n):
        if v_first:
            v = F.normalize(w.mT @ u, dim=0, eps=eps)
            u = F.normalize(w @ v, dim=0, eps=eps)
        else:
            u = F.normalize(w @ v, dim=0, eps=eps)
            v = F.normalize(w.mT @ u, dim=0, eps=eps)
    return u, v


# -- the learner's module ---------------------------------------------------------------------


def made(kata, weight, **kwargs):
    """The learner's SpectralNorm of `weight`, built on its float32 CPU copy, then moved to
    weight's dtype and device: building on the weight's own is test_follows_weight's."""
    sn = kata.SpectralNorm(weight.detach().float().cpu(), **kwargs)
    return sn.to(weight.device, weight.dtype)


def vectors(sn, *, given):
    """The learner's _u and _v, however registered (a parameter too: how they are registered
    is test_buffers' business), or fail for test_buffers."""
    found = []
    for name in ("_u", "_v"):
        value = getattr(sn, name, MISSING)
        if not isinstance(value, torch.Tensor):
            fail_for(
                "test_buffers",
                f"{given} has no tensor {name}: torch's SpectralNorm keeps u and v as the "
                "buffers _u and _v, and this check reads and sets them.",
            )
        registered = {**dict(sn.named_buffers()), **dict(sn.named_parameters())}
        if name not in registered:
            fail_for(
                "test_buffers",
                f"{given}: {name} is a plain tensor attribute, which .to() does not move: "
                "register it with register_buffer.",
            )
        found.append(value)
    return found[0], found[1]


def holding(sn, u, v, *, given, owner="test_buffers"):
    """sn, its _u and _v set to u and v (their shapes are `owner`'s business)."""
    mine_u, mine_v = vectors(sn, given=given)
    for name, have, want in (("_u", mine_u, u), ("_v", mine_v, v)):
        if have.shape != want.shape:
            fail_for(
                owner,
                f"{given}: {name} has shape {tuple(have.shape)}, expected {tuple(want.shape)}.",
            )
    with torch.no_grad():
        mine_u.copy_(u)
        mine_v.copy_(v)
    return sn


def read(sn, *, given):
    """Copies of the learner's u and v, float64."""
    u, v = vectors(sn, given=given)
    return u.detach().double().clone(), v.detach().double().clone()


def output(sn, weight):
    return expect_tensor(sn(weight))


def normalized_layer(kata, layer, *, given, **kwargs):
    """The learner's spectral_norm(layer, **kwargs), which must return the layer."""
    out = kata.spectral_norm(layer, **kwargs)
    if out is not layer:
        shown = "None" if out is None else f"a {type(out).__name__}"
        fail_for(
            "test_spectral_norm_function",
            f"{given} returned {shown}, not the module it was given: return the module, as "
            "torch's spectral_norm does, so that a model can be written "
            "spectral_norm(nn.Linear(5, 3)).",
        )
    return layer


def parametrization(layer, name, *, given):
    """The learner's SpectralNorm registered on layer.<name>."""
    if not parametrize.is_parametrized(layer, name):
        fail_for(
            "test_spectral_norm_function",
            f"{given} registered no parametrization on {name}: register your SpectralNorm "
            "with torch.nn.utils.parametrize.register_parametrization(module, name, ...).",
        )
    return layer.parametrizations[name][0]


def first_difference(got, want):
    """'at [i]: expected a, got b' for the first element of got off from want."""
    bad = ~torch.isclose(got.double().cpu(), want.double().cpu(), rtol=1e-5, atol=1e-5)
    if not bad.any():
        return "within tolerance"
    i = tuple(int(k) for k in bad.nonzero()[0])
    return f"at {list(i)}: expected {want[i].item():.6g}, got {got[i].item():.6g}"


def shown(t):
    return "[" + ", ".join(f"{x:.4f}" for x in t.detach().double().cpu().flatten().tolist()) + "]"


CHECK_DIM, CHECK_ORDER = "test_dim_moved_to_front", "test_dim_keeps_the_others_in_order"


def expect_moved_to_front(kata, weight, dim, *, what, check):
    """The learner's SpectralNorm(weight, dim=dim) does what its SpectralNorm does with the
    matrix torch makes (dim moved to the front, the others in order, flattened): the same u,
    v and output after one training forward, from the same u and v. `check` is the caller."""
    given = f"SpectralNorm(weight, dim={dim}) with {what}, u and v set"
    flat = matrix(weight, dim)
    u0, v0 = unit(flat.shape[0], weight.device), unit(flat.shape[1], weight.device)
    moved = made(kata, weight, dim=dim)
    holding(moved, u0, v0, given=given, owner=CHECK_DIM)
    twin = holding(made(kata, flat), u0, v0, given=given)
    out = output(moved, weight)
    expected = output(twin, flat).detach()
    given += f", against your SpectralNorm of that matrix, {tuple(flat.shape)}"
    mine_uv, twin_uv = read(moved, given=given), read(twin, given=given)
    advice = (
        f"move dim {dim} to the front (a permute) before flattening"
        if check == CHECK_DIM
        else f"move dim {dim} to the front and keep the others in order (a permute, not a "
        "transpose with dim 0)"
    )
    for name, have, want in zip(("u", "v"), mine_uv, twin_uv, strict=True):
        if not values_close(have, want):
            fail(
                f"{given}: after one training forward, {name} = {shown(have)}, expected "
                f"{shown(want)}: {advice}."
            )
    expected = expected.reshape(weight.movedim(dim, 0).shape).movedim(0, dim)
    expect_close(out, expected, given=given, equal_nan=False)


MODES = ("training", "training", "eval")


def torch_hook(layer, ref, n):
    """torch's older spectral norm (a forward pre-hook, v updated first) of a copy of layer,
    holding the u and v of ref, torch's parametrized copy, as they are now."""
    hook = hook_spectral_norm(copy.deepcopy(layer), n_power_iterations=n)
    sn = ref.parametrizations.weight[0]
    with torch.no_grad():
        hook.weight_u.copy_(sn._u)
        hook.weight_v.copy_(sn._v)
    return hook


def steps(module, xs):
    """module's outputs for xs, one forward each, in MODES' modes."""
    outs = []
    for mode, x in zip(MODES, xs, strict=True):
        module.train(mode == "training")
        outs.append(expect_tensor(module(x)).detach())
    return outs


def grads_of(module, weight, x, g, *, given=""):
    """One forward of module at x and a backward from g (random where None): the gradients
    of the input, the weight (the parameter called `weight`) and the bias, and g."""
    xi = x.clone().requires_grad_()
    out = expect_tensor(module(xi))
    g = torch.randn_like(out) if g is None else g
    if out.shape != g.shape:
        fail(f"{given}: the output has shape {tuple(out.shape)}, torch's {tuple(g.shape)}.")
    out.backward(g)
    params = dict(module.named_parameters())
    return {"input": xi.grad, "weight": params[weight].grad, "bias": params["bias"].grad, "g": g}


def learner_like(kata, layer, ref, *, given, n):
    mine = normalized_layer(kata, copy.deepcopy(layer), given=given, n_power_iterations=n)
    try:
        mine.load_state_dict(ref.state_dict())
    except Exception as e:
        fail_for("test_state_dict_round_trip", f"{given}: torch's state_dict does not load: {e}")
    return mine


ORIGINAL = "parametrizations.weight.original"
LAYERS = (
    ("nn.Linear(5, 3)", lambda: nn.Linear(5, 3), (4, 5)),
    ("nn.Conv2d(2, 4, 3)", lambda: nn.Conv2d(2, 4, 3), (2, 2, 5, 5)),
)


@SUITE.perf
def perf_case(kata, device):
    """What --perf times: your spectral-normed Linear and torch's, a training forward."""
    d = 1024
    layer = nn.Linear(d, d).to(device)
    mine = kata.spectral_norm(copy.deepcopy(layer))
    ref = torch_spectral_norm(copy.deepcopy(layer))
    x = torch.randn(64, d, device=device, requires_grad=True)
    given = f"spectral_norm(nn.Linear({d}, {d})) on x {shape_of(x)}"
    return PerfCase.of_layers(
        given, mine, ref, x, builtin_name="torch.nn.utils.parametrizations.spectral_norm"
    )
