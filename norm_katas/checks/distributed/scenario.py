"""Scenarios a distributed BatchNorm suite declares: steps run on the ranks at once, checked
against torch's BatchNorm on the ranks' batches put together.

A suite declares its ranks once, `WORLD = WorldSpec(4, "SyncBatchNorm", groups=..., forbidden=...)`,
then builds `WORLD.scenario(C, xs, ...)` in its checks: `run` gives what each rank's layer
did (outputs, gradients, buffers, collectives), `expected` what it should have. The ranks are
started on first use and reused by every scenario until a run leaves them unusable; the plugin
stops them after the suite (world.close_all).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from norm_katas.checks import describe_call, fail, place_state, shape_of
from norm_katas.checks.distributed.rank import Mistake, RankContext
from norm_katas.checks.distributed.verdict import expect_ranks_ok
from norm_katas.checks.distributed.world import RankReport, World, WorldError
from norm_katas.runtime import tracing

STATS = ("running_mean", "running_var", "num_batches_tracked")

# The worlds started so far, by (learner's file, backend): reused while they are alive.
_WORLDS: dict[tuple[str, str], World] = {}


class GlobalBatchNorm(nn.modules.batchnorm._BatchNorm):
    """torch's BatchNorm for any (N, C, *) input: what SyncBatchNorm computes on all the ranks'
    batches put together."""

    def _check_input_dim(self, x: torch.Tensor) -> None:
        pass


@dataclass(frozen=True)
class WorldSpec:
    """The ranks a suite asks for: how many, the process groups made on every start (name ->
    member ranks), the class of the learner's each rank builds, and the built-in operations
    that class may not call (traced on the ranks when a scenario asks)."""

    size: int
    layer: str
    groups: dict[str, list[int]] = field(default_factory=dict)
    forbidden: frozenset[str] = frozenset()
    # The suite's check named for every rank making the same collective calls: collectives
    # that diverge in any scenario are its mistake (expect_ranks_ok).
    collectives_check: str = ""

    def backend_for(self, device: torch.device) -> str:
        """nccl with one GPU per rank where there are enough GPUs; gloo on the CPU otherwise."""
        if device.type == "cuda" and torch.cuda.device_count() >= self.size:
            return "nccl"
        return "gloo"

    def device_note(self, device: torch.device) -> str | None:
        """Said under the header when --device cuda cannot give every rank its own GPU."""
        if device.type == "cuda" and self.backend_for(device) == "gloo":
            return (
                f"The {self.size} ranks need {self.size} GPUs for nccl, and this machine has "
                f"{torch.cuda.device_count()}: they run on the CPU over gloo; the single-process "
                "checks use the GPU."
            )
        return None

    def world(self, kata: Any, device: torch.device) -> World:
        """The ranks with the learner's file loaded: started on first use, and again after
        a run that left them unusable (a rank killed, stuck or crashed)."""
        key = (str(kata.path), self.backend_for(device))
        current = _WORLDS.get(key)
        if current is not None and current.alive:
            return current
        if current is not None:
            current.close(kill=True)
        try:
            _WORLDS[key] = World(
                kata.path, self.size, module_name=f"norm_katas_learner_{self.layer.lower()}",
                backend=key[1], groups=self.groups,
            )  # fmt: skip
        except WorldError as e:
            fail(str(e))
        return _WORLDS[key]

    def scenario(self, C: int, xs: list[list[Any]], **options: Any) -> Scenario:
        """Scenario(self, C, xs, ...): see Scenario."""
        return Scenario(self, C, xs, **options)


class Scenario:
    """Steps run on the ranks at once, and the same steps on the global batch for reference.

    xs[k][r]: rank r's input at step k (None: the rank sits out); grads likewise (None: no
    backward). groups[r]: the name of rank r's process group (None: the default group).
    """

    def __init__(
        self, spec: WorldSpec, C, xs, *, training=None, grads=None, kwargs=None, state=None,
        groups=None, dtype=torch.float64, trace=False,
    ) -> None:  # fmt: skip
        self.spec = spec
        self.C, self.xs, self.dtype = C, [[_as(x, dtype) for x in step] for step in xs], dtype
        self.training = training or [True] * len(xs)
        self.grads = grads or [None] * len(xs)
        self.kwargs = kwargs or {}
        self.state = None if state is None else {k: _as(v, dtype) for k, v in state.items()}
        self.groups = groups or [None] * spec.size
        self.trace = trace

    def members(self, rank: int) -> list[int]:
        name = self.groups[rank]
        return self.spec.groups[name] if name else list(range(self.spec.size))

    @property
    def given(self) -> str:
        name = describe_call(self.spec.layer, self.C, **self.kwargs)
        who = f"on {self.spec.size} ranks"
        named = sorted({g for g in self.groups if g})
        if named:
            who += " with process_group " + " and ".join(
                f"[{', '.join(map(str, self.spec.groups[g]))}]" for g in named
            )
        return f"{name} {who}, {describe_inputs(self.xs[0])}"

    def run(self, kata, device, *, advice: str = "") -> list[dict | None]:
        """What each rank reported (None where it sat out); fails on any rank's problem."""
        reports = self.run_reports(kata, device)
        check = self.spec.collectives_check
        return expect_ranks_ok(reports, given=self.given, advice=advice, collectives_check=check)

    def run_reports(self, kata, device) -> list[RankReport]:
        payloads = []
        for r in range(self.spec.size):
            if all(step[r] is None for step in self.xs):
                payloads.append(None)
                continue
            payloads.append({
                "layer": self.spec.layer, "C": self.C, "kwargs": self.kwargs,
                "group": self.groups[r], "dtype": self.dtype, "state": self.state,
                "trace": self.trace, "forbidden": sorted(self.spec.forbidden),
                "steps": [
                    {"x": self.xs[k][r], "training": self.training[k],
                     "grad": None if self.grads[k] is None else _as(self.grads[k][r], self.dtype)}
                    for k in range(len(self.xs))
                ],
            })  # fmt: skip
        return self.spec.world(kata, device).run(run_steps, payloads)

    def steps(self, values: list, rank: int) -> list[tuple[dict, dict]]:
        """(what rank `rank` reported, what it should have) for each step."""
        return list(zip(values[rank]["steps"], self.expected(rank), strict=True))

    def expected(self, rank: int) -> list[dict]:
        """Step by step, what rank `rank` should get: BatchNorm over its group's global batch,
        in float64."""
        members = self.members(rank)
        at = members.index(rank)
        ref = GlobalBatchNorm(self.C, **self.kwargs).double()
        if self.state is not None:
            ref.load_state_dict({k: _as(v, torch.float64) for k, v in self.state.items()})
        params = list(ref.parameters())
        out = []
        for k, step in enumerate(self.xs):
            ref.train(self.training[k])
            parts = [step[r].double() for r in members]
            x = torch.cat(parts).requires_grad_()
            y = ref(x)
            sizes = [p.size(0) for p in parts]
            want = {"y": y.detach().split(sizes)[at]}
            if self.grads[k] is not None:
                g = torch.cat([self.grads[k][r].double() for r in members])
                want["grad_x"] = torch.autograd.grad(y, x, g, retain_graph=True)[0].split(sizes)[at]
                if params:  # this rank's share: the gradient through its own outputs only
                    mask = torch.zeros_like(g)
                    start = sum(sizes[:at])
                    mask[start : start + sizes[at]] = 1
                    grads = torch.autograd.grad(y, params, g * mask, retain_graph=True)
                    want["grad_weight"], want["grad_bias"] = grads
                    want["grad_weight_all"], want["grad_bias_all"] = torch.autograd.grad(
                        y, params, g, retain_graph=True
                    )
            for name in STATS:
                value = getattr(ref, name)
                want[name] = None if value is None else value.detach().clone()
            out.append(want)
        return out


def run_steps(kata: Any, ctx: RankContext, spec: dict | None) -> dict | None:
    """On each rank: build the learner's layer, run the steps, report what it did."""
    if spec is None:
        return None  # this rank sits this scenario out
    kwargs = dict(spec["kwargs"])
    if spec["group"] is not None:
        kwargs["process_group"] = ctx.groups[spec["group"]]
    ctx.phase("__init__")
    bn = getattr(kata, spec["layer"])(spec["C"], **kwargs).to(ctx.device, spec["dtype"])
    if spec["state"] is not None:
        # Placed through the layer's attributes, however they are registered: how the state is
        # registered is the single-process checks' business (place_state).
        fresh = GlobalBatchNorm(spec["C"], **spec["kwargs"]).state_dict()
        problem = place_state(bn, spec["state"], initial=fresh)
        if problem is not None:
            name, why = problem
            raise Mistake(f"nn.{spec['layer']}'s {name} has nowhere to go: {why}.")
    trace = tracing.Trace()

    def recording() -> contextlib.AbstractContextManager:  # kept across steps in one Trace
        return tracing.recording(trace) if spec["trace"] else contextlib.nullcontext()

    steps = []
    for k, step in enumerate(spec["steps"], 1):
        mode = "training" if step["training"] else "eval"
        bn.train(step["training"])
        x = step["x"].to(ctx.device).requires_grad_(step["grad"] is not None)
        mark = ctx.mark()
        ctx.phase(f"forward ({mode} step {k})")
        with recording():
            y = bn(x)
        if not isinstance(y, torch.Tensor):
            raise Mistake(f"forward returned {type(y).__name__}, not a tensor.")
        out = {"y": y.detach().cpu()}
        if step["grad"] is not None:
            ctx.phase(f"backward ({mode} step {k})")
            if not y.requires_grad:
                raise Mistake(
                    f"the output of training step {k} does not require grad: is it detached?"
                )
            with recording():
                y.backward(step["grad"].to(ctx.device))
            out["grad_x"] = None if x.grad is None else x.grad.cpu()
            for name, p in bn.named_parameters():
                out[f"grad_{name}"] = None if p.grad is None else p.grad.detach().cpu().clone()
                p.grad = None
        for name in STATS:
            value = getattr(bn, name, None)
            out[name] = value.detach().cpu().clone() if isinstance(value, torch.Tensor) else value
        out["calls"] = ctx.calls_since(mark)
        steps.append(out)
    ctx.phase("done")
    culprit = trace.first_call_of(set(spec["forbidden"])) if spec["trace"] else None
    return {"steps": steps, "culprit": culprit}


def _as(value: Any, dtype: torch.dtype) -> Any:
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.to(dtype)
    return value


def describe_inputs(xs: list) -> str:
    """'x (6, 3, 4) float64 on every rank' or 'x (5, 3), (1, 3), (3, 3), (1, 3) float64'."""
    present = [x for x in xs if x is not None]
    dtype = str(present[0].dtype).removeprefix("torch.")
    shapes = [x.shape for x in present]
    if len(present) == len(xs) and all(s == shapes[0] for s in shapes):
        return f"x {shape_of(present[0])} on every rank"
    shown = ", ".join("-" if x is None else f"({', '.join(map(str, x.shape))})" for x in xs)
    return f"x {shown} {dtype} on ranks 0-{len(xs) - 1}"
