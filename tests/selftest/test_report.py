"""Self-tests for the verdict's wording: summary lines that agree with the exit status, folding
only what shares the headline's cause, the learner's prints, and hints only when asked.

Most build a Report by hand and print it: the wording is the report's, whatever the kata."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from norm_katas.content import registry
from norm_katas.engine.report import (
    CORE,
    CRASH,
    FAIL,
    INFO,
    PARITY,
    TIMEOUT,
    Check,
    Printer,
    Report,
)
from norm_katas.engine.suggest import NOTEBOOK


@pytest.fixture(autouse=True)
def _through_nox(monkeypatch: pytest.MonkeyPatch) -> None:
    """These verdicts are read as nox prints them: options offered as `-- --all`."""
    monkeypatch.setenv("NORM_KATAS_INVOKED_FROM", str(registry.ROOT))


def test_options_are_offered_as_the_command_was_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    """After nox the options follow `--`; after `python -m norm_katas grade` they do not."""
    from norm_katas.engine import suggest

    assert suggest.option("--all") == "-- --all"
    assert suggest.command("grade", "layernorm", "--hints") == "nox -s kata-layernorm -- --hints"
    monkeypatch.delenv("NORM_KATAS_INVOKED_FROM")
    assert suggest.option("--all") == "--all"
    assert suggest.command("progress") == "python -m norm_katas progress"
    assert suggest.option("--all", suggest.NOTEBOOK) == "--all"


def check(name: str, outcome: str = "passed", tier: str = CORE, kind: str = "", **kw) -> Check:
    hints = ["the idea", "the formula"]
    return Check(name, name.replace("_", " "), hints, tier=tier, outcome=outcome, kind=kind, **kw)


def verdict(report: Report, **options) -> str:
    out = io.StringIO()
    printer = Printer(out, **options)
    for c in report.checks:
        printer.check(c, report)
    printer.verdict(report)
    return out.getvalue()


def make(*checks: Check) -> Report:
    report = Report("layernorm", "LayerNorm", "katas/layernorm.py", "cpu", list(checks))
    report.finished = True
    return report


def score_line(text: str) -> str:
    return next(line for line in text.splitlines() if re.match(r"Interview core \d", line))


def test_strict_with_a_parity_failure_is_not_called_solved() -> None:
    report = make(check("a"), check("b", "failed", PARITY, FAIL, message="wrong"))
    plain = verdict(report)
    assert "✓ solved" in score_line(plain) and "(stretch)" in score_line(plain)
    strict = verdict(report, strict=True)
    assert "solved" not in score_line(strict), strict  # the exit status is 1
    assert "required by --strict" in score_line(strict)
    assert "--strict requires torch parity too" in strict


def test_a_solved_core_is_not_stuck() -> None:
    report = make(check("a"), check("b", "failed", PARITY, FAIL, message="wrong"))
    assert "Stuck?" not in verdict(report)
    assert "Stuck?" in verdict(report, strict=True)  # under --strict parity is the task
    core = make(check("a", "failed", CORE, FAIL, message="wrong"), check("b"))
    assert "Stuck? Grade again with -- --hints" in verdict(core)


def test_the_options_offered_are_the_ones_this_door_takes() -> None:
    head = check("a", "failed", CORE, FAIL, message="wrong")
    report = make(head, check("b", "failed", CORE, FAIL, message="wrong"))
    cell = verdict(report, door=NOTEBOOK)  # typed after a cell's %%kata NAME
    assert "Grade again with --hints" in cell and "(--all shows each)" in cell, cell
    assert "-- --" not in cell
    mock = verdict(report, mock=True)  # a mock interview's gradings take no options
    assert "--hints" not in mock and "--all" not in mock and "Stuck?" not in mock, mock


def test_a_tier_with_nothing_counted_is_neither_passed_nor_failed() -> None:
    skipped = [check(f"p{i}", "skipped", PARITY, message="no GPU") for i in range(3)]
    text = score_line(verdict(make(check("a"), *skipped)))
    assert "torch parity 0/0 –" in text and "✗" not in text and "(3 skipped)" in text, text


def test_a_skipped_check_is_not_called_passing() -> None:
    skipped = check("p", "skipped", PARITY, message="the engine cannot run it")
    text = verdict(make(check("a"), check("b", tier=PARITY), skipped))
    assert "Every check passes" not in text, text
    assert "Every check that ran passes, the stretch goals included; 1 was skipped" in text, text
    assert "Every check passes, the stretch goals included." in verdict(make(check("a"))), text


def test_an_information_report_is_listed_apart_and_never_counted() -> None:
    info = check("test_bandwidth", "skipped", INFO, message="on the CPU there is nothing")
    report = make(check("a"), check("b", tier=PARITY), info)
    text = verdict(report)
    assert "skipped" not in score_line(text), text
    assert "\nInformation\n  test bandwidth: on the CPU there is nothing" in text, text
    assert report.solved and report.strict_solved and report.tally() == (2, 2)


def fold_lines(text: str) -> list[str]:
    """The verdict's lines under the headline's message, up to the score."""
    lines = text.splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith("✗ "))
    end = next(i for i, line in enumerate(lines) if re.match(r"Interview core \d", line))
    return [line for line in lines[start + 2 : end] if line]


def test_only_failures_with_evidence_fold_under_the_headline() -> None:
    at_12 = "AttributeError at katas/layernorm.py line 12"
    head = check("a", "failed", CORE, CRASH, message="your code raised AttributeError: x, at 12",
                 raised=at_12)  # fmt: skip
    # The same exception at the same line, with another message (shapes differ by check).
    same = check("b", "failed", CORE, CRASH, message="... : y, at 12", raised=at_12)
    elsewhere = check("c", "failed", CORE, CRASH, message="your code raised AttributeError: x",
                      raised="AttributeError at katas/layernorm.py line 30")  # fmt: skip
    slow = check("d", "failed", CORE, TIMEOUT, message="took too long", raised="time-out at ...")
    wrong = check("e", "failed", CORE, FAIL, message="wrong values")
    text = verdict(make(head, same, elsewhere, slow, wrong))
    assert fold_lines(text) == [
        "  1 more check fails for the same reason: the same " + at_12 + ".",
        "  3 other checks fail (-- --all shows each):",
        "    · c (an error)",
        "    · d (timed out)",
        "    · e",
    ], text
    assert "probably" not in text


def test_all_says_a_repeated_explanation_once() -> None:
    """--all: one mistake met on other inputs gives messages that differ in their first
    sentence (the input, the count) and end in the same explanation and advice. Each failure
    keeps its evidence; the shared sentences are said once, and a short shared ending again."""
    advice = (
        "On a GPU such an access reads garbage or crashes, whatever the values there. Mask "
        "every tl.load and tl.store, the weight's too."
    )
    head = check("a", "failed", CORE, FAIL, message=f"x (2, 100): read 28 outside. {advice}")
    again = check("b", "failed", CORE, FAIL, message=f"x (4, 100): read 56 outside. {advice}")
    short = check("c", "failed", CORE, FAIL, message="y was 3.0. Expected 2.0.")
    other = check("d", "failed", CORE, FAIL, message="z was 5.0. Expected 2.0.")
    text = verdict(make(head, again, short, other), expand=True)
    assert text.count(advice) == 1, text  # the headline's
    assert "x (4, 100): read 56 outside. (The rest of this message is as above.)" in text
    assert "z was 5.0. Expected 2.0." in text, text  # too short to refer to


def test_two_independent_mistakes_are_both_named() -> None:
    # Dropout: p = 1 giving NaN headlines, and a mask built on the CPU fails the device check.
    # Both fail with wrong values, nothing says they share a cause: the second is named.
    nan = check("test_p_one_gives_zeros", "failed", CORE, FAIL, message="got nan")
    cpu = check("test_follows_device", "failed", CORE, FAIL, message="forward mixed devices")
    cpu.description = "runs on CUDA: the mask is created on the input's device"
    text = verdict(make(nan, cpu))
    assert fold_lines(text) == [
        "  1 other check fails (-- --all shows each):",
        "    · runs on CUDA: the mask is created on the input's device",
    ], text
    # SyncBatchNorm: an affine=False crash does not speak for the rank means' spread.
    affine = check("test_parameters", "failed", CORE, CRASH, message="raised TypeError",
                   raised="TypeError at katas/syncbatchnorm.py line 20")  # fmt: skip
    spread = [check(f"test_{i}", "failed", CORE, FAIL, message="wrong") for i in range(11)]
    text = verdict(make(affine, *spread))
    assert "same reason" not in text and "  11 other checks fail (-- --all shows each):" in text
    assert fold_lines(text)[-1] == "    and 6 more", text  # --all shows each


def test_the_same_check_on_other_inputs_and_a_declared_owner_fold() -> None:
    # LayerNorm: a trailing-shape headline does not fold the half-precision failures, which
    # fold under a headline of their own check (a parametrized check's variants).
    shape = check("test_wrong_trailing_shape_raises", "failed", PARITY, FAIL, message="returned")
    halves = [
        check(f"test_half_precision[{d}]", "failed", PARITY, FAIL, message=f"wrong in {d}")
        for d in ("float16", "bfloat16")
    ]
    text = verdict(make(check("a"), shape, *halves))
    assert fold_lines(text)[0] == "  2 other checks fail (-- --all shows each):", text
    text = verdict(make(check("a"), *halves))
    assert fold_lines(text) == [
        "  1 more check fails for the same reason: the same check on other inputs (-- --all "
        "shows each)."
    ], text
    # A failure the suite declares another check's (fail_for) folds under that check.
    owner = check("test_mask", "failed", CORE, FAIL, message="reads out of bounds")
    met = check("test_wide", "failed", CORE, FAIL, message="reads out of bounds at 4096",
                belongs="test_mask")  # fmt: skip
    text = verdict(make(met, owner))
    assert "1 more check fails for the same reason: the same mistake, met by other checks" in text


def test_a_failure_met_by_another_check_is_titled_for_its_mistake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race check passes on its own row; a values check's wider row meets the race and
    fails for it (fail_for): the headline names the race, and which check met it."""
    from norm_katas.doors import render
    from norm_katas.engine.request import Request
    from norm_katas.practice import history

    race = check("test_race_free")
    met = check("test_max_subtracted", "failed", CORE, FAIL, message="program 1 races program 0",
                belongs="test_race_free")  # fmt: skip
    report = make(check("test_shapes"), met, race)
    text = verdict(report)
    assert (
        "✗ test race free\n    (its own check passed; met on the inputs of: test max subtracted)\n"
        in text
    ), text
    kata = registry.get("layernorm")
    page = render.verdict(Request.create(kata, report.file), 1, report, "")
    assert "<b>test race free</b><br>" in page and "met on the inputs of: test max" in page, page
    assert 'data-headline="test_max_subtracted" data-mistake="test_race_free"' in page, page
    data = report.to_json()
    assert data["headline"] == "test_max_subtracted" and data["mistake"] == "test_race_free"
    monkeypatch.setenv("NORM_KATAS_DATA", str(tmp_path))
    report.is_stub = False
    history.record_report(report, "practice")  # the mistake counted is the race
    assert [e.headline for e in history.events("layernorm")] == ["test_race_free"]
    # A failure of its own check keeps its own title, and so does a torch-parity case of a
    # core check's mistake: that check, and the kata, are solved.
    assert "✗ test shapes\n    wrong\n" in verdict(
        make(check("test_shapes", "failed", CORE, FAIL, message="wrong"), met, race)
    )
    empty = check("test_empty_rank", "failed", PARITY, FAIL, message="deadlock",
                  belongs="test_race_free")  # fmt: skip
    text = verdict(make(race, empty))
    assert "✗ test empty rank\n    deadlock\n" in text and "met by" not in text, text


def test_the_notebook_groups_as_the_terminal_does() -> None:
    from norm_katas.doors import render
    from norm_katas.engine.request import Request

    kata = registry.get("layernorm")
    path = str(registry.ROOT / "katas" / "layernorm.py")
    at_12 = f"RuntimeError at {path} line 12"
    head = check("a", "failed", CORE, CRASH, message="your code raised RuntimeError", raised=at_12)
    same = check("b", "failed", CORE, CRASH, message="your code raised RuntimeError", raised=at_12)
    other = check("c", "failed", CORE, FAIL, message="wrong")
    report = make(head, same, other)
    report.file = path
    page = render.verdict(Request.create(kata, path), 1, report, "")
    # The cell's first line is %%kata: line 12 of the file is the cell's 13.
    assert (
        "1 more check fails for the same reason: the same RuntimeError at your cell line 13."
        in page
    )
    assert "1 other check fails:<ul><li>c</li></ul>" in page, page


def test_prints_are_shown_beside_their_check_and_trimmed() -> None:
    printed = "\n".join(f"line {i}" for i in range(5)) + "\n" + "x" * 150
    text = verdict(make(check("a", output="hello"), check("b", output=printed)))
    lines = text.splitlines()
    assert lines[lines.index("  ✓ a") + 1] == "      │ hello", text
    assert "      │ line 2" in lines and "      │ line 3" not in lines, text
    assert "      │ (3 more lines printed; -- -s shows all your output)" in lines, text


def test_json_holds_hints_only_when_asked() -> None:
    report = make(check("a", "failed", CORE, FAIL, message="wrong"), check("b"))
    assert all(c["hints"] == [] for c in report.to_json()["checks"])
    one = report.to_json(hints=1)["checks"]
    assert one[0]["hints"] == ["the idea"] and one[1]["hints"] == []  # a pass needs none
    assert report.to_json(hints=2)["checks"][0]["hints"] == ["the idea", "the formula"]


def test_a_graded_print_reaches_the_checklist_and_the_json(grade, tmp_path: Path) -> None:
    source = (registry.ROOT / "solutions" / "dropout.py").read_text()
    mine = tmp_path / "dropout.py"
    mine.write_text(source + '\nprint("hello from the top level")\n')
    report, output, code = grade("dropout", mine)
    assert code == 0, output
    assert "│ hello from the top level" in output, output
    assert any("hello from the top level" in c["output"] for c in report["checks"])
    assert all(c["hints"] == [] for c in report["checks"])


def test_the_batchnorm_single_value_check_says_when_it_applies() -> None:
    suite = registry.get("batchnorm").suite.read_text()
    title = re.search(r'def test_single_value_per_channel_raises.*?"""(.*?)\n', suite, re.S)
    # eval mode with running statistics is fine: the title must not say "training" alone
    assert title and "in eval with track_running_stats off" in title[1], title


def test_a_second_independent_mistake_is_named_in_the_verdict(grade) -> None:
    path = registry.ROOT / "tests" / "catalogue" / "dropout" / "nan_at_p_one_and_mask_on_cpu.py"
    report, output, code = grade("dropout", path)
    assert code == 1 and report["headline"] == "test_p_one_gives_zeros", output
    device = next(c for c in report["checks"] if c["name"] == "test_follows_device")
    assert device["outcome"] == "failed", output
    assert f"    · {device['description']}" in fold_lines(output), output
    assert "same reason" not in output, output


def test_simulated_cuda_blames_the_learners_error_and_hides_torchs_log(grade) -> None:
    # A mean without keepdim does not broadcast: the CPU raises it, and so does simulated
    # CUDA, inside torch's meta kernels, whose failure torch's fake tensors also log.
    path = registry.ROOT / "tests" / "catalogue" / "layernorm" / "mean_without_keepdim.py"
    report, output, code = grade("layernorm", path, "-k", "follows_device")
    assert code == 1, output
    [device] = report["checks"]
    assert device["outcome"] == "failed", output  # not skipped as a limit of the simulation
    assert device["message"].startswith("your code raised RuntimeError"), device
    line = path.read_text().splitlines().index("        xc = x - x.mean(dims)") + 1
    assert f"line {line}: xc = x - x.mean(dims)" in device["message"], device
    assert device["output"] == "" and "fake_tensor" not in output, output
    assert "simulated CUDA could not run" not in output, output


def test_a_device_check_graded_on_the_cpu_says_it_ran_on_simulated_cuda(
    grade, request: pytest.FixtureRequest
) -> None:
    # Every suite's device check is titled "runs on CUDA": on the CPU that would claim a run
    # that never happened. The checklist says where it ran.
    import torch

    from norm_katas.engine.checklist import ON_CUDA, SIMULATED_CUDA

    for kata in registry.load():
        titles = re.findall(r'def test_follows_device.*?"""(.*?)\n', kata.suite.read_text(), re.S)
        assert all(t.startswith(ON_CUDA) for t in titles), (kata.name, titles)
    report, output, _ = grade("layernorm", "solutions", "-k", "follows_device")
    [check] = report["checks"]
    on_gpu = str(request.config.getoption("device")).startswith("cuda")
    simulated = not (on_gpu and torch.cuda.is_available())
    assert check["description"].startswith(SIMULATED_CUDA if simulated else ON_CUDA), check
    assert f"✓ {check['description']}" in output, output


def test_a_mistake_met_by_another_check_gets_the_hint_of_the_check_named_for_it(grade) -> None:
    # torch work outside a Triton kernel fails every check that calls it: the formula check's
    # hint (the maths) would be about a mistake the file does not make.
    path = registry.ROOT / "tests" / "catalogue" / "fused_add_rmsnorm" / "torch_add_outside.py"
    report, output, code = grade("fused-add-rmsnorm", path, "-k", "test_formula", "--hints")
    [check] = report["checks"]
    assert code == 1 and check["belongs"] == "test_kernel_does_the_work", check
    assert check["hints"] and "The point of fusing is one pass" in check["hints"][0], check
    assert "Hint (idea): The point of fusing is one pass" in output, output


@pytest.mark.parametrize(
    ("got", "said"),
    [(float("nan"), "the largest difference is nan at [1]"),
     (float("inf"), "the largest difference is inf at [1]"),
     (2.5, "the largest difference is 0.5 at [1]")],
)  # fmt: skip
def test_a_value_message_says_the_difference_it_found(got: float, said: str) -> None:
    # A NaN is the worst of differences and is said as NaN: "inf" would be a value not there.
    import torch

    from norm_katas.checks import expect_close

    with pytest.raises(pytest.fail.Exception) as failed:
        expect_close(torch.tensor([1.0, got, 3.0]), torch.tensor([1.0, 2.0, 3.0]), given="x")
    assert said in str(failed.value), failed.value


def test_a_value_message_shows_the_digits_that_differ() -> None:
    # A float64 value off by 1e-9 printed with 6 digits read "expected 0.706877, got 0.706877".
    import torch

    from norm_katas.checks import expect_close

    want = torch.tensor([0.7068771234], dtype=torch.float64)
    with pytest.raises(pytest.fail.Exception) as failed:
        expect_close(want + 1e-8, want, given="x", rtol=1e-12, atol=0)
    assert "expected 0.70687712, got 0.70687713." in str(failed.value), failed.value
    with pytest.raises(pytest.fail.Exception) as failed:
        expect_close(want + 0.5, want, given="x")
    assert "expected 0.706877, got 1.20688." in str(failed.value), failed.value


def test_torchs_own_log_is_not_the_learners_output() -> None:
    import logging

    from norm_katas.engine.conditions import learners_output, torch_log_muted

    cpp = "[W1125 16:34:13.431000 7197 torch/csrc/distributed/c10d/ProcessGroupGloo.cpp:123] "
    mine = "E1125 is the learner's own line\nx.py:3] too\n"
    assert learners_output(f"hello\n{cpp}Warning: x\n{mine}") == f"hello\n{mine}"

    class Kept(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.said: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.said.append(record.getMessage())

    kept = Kept()
    fake, learner = logging.getLogger("torch._subclasses.fake_tensor"), logging.getLogger("mine")
    for logger in (fake, learner):
        logger.addHandler(kept)
    try:
        with torch_log_muted():
            fake.error("failed while attempting to run meta")
            learner.error("the learner's log")
        fake.error("after the check")
    finally:
        for logger in (fake, learner):
            logger.removeHandler(kept)
    assert kept.said == ["the learner's log", "after the check"]


def test_hints_are_chosen_for_the_failure() -> None:
    from norm_katas.content import pristine
    from norm_katas.engine.report import TODO, choose_hints
    from norm_katas.engine.report.hints import CRASH_HINT, OUTSIDE_HINT, TIMEOUT_HINT

    doc = [
        "make it a Parameter",
        "the Parameter's code",
        "[initial] start at one",
        "[initial] ones",
    ]
    wrong_value = "RMSNorm(8,): initial weight differs from the expected value at [0]"
    assert choose_hints(doc, FAIL, wrong_value) == ["start at one", "ones"]
    assert choose_hints(doc, FAIL, "RMSNorm(8,) has parameters []") == doc[:2]
    # A crash is not the check's mistake: its hint is the error's, from the stub's pitfalls.
    pitfalls = pristine.split_pitfalls(pristine.text(registry.get("layernorm")))[1]
    broadcast = (
        "your code raised RuntimeError: The size of tensor a (8) must match the size of tensor "
        "b (5) at non-singleton dimension 2, at katas/layernorm.py line 18: var = ..."
    )
    (hint,) = choose_hints(doc, CRASH, broadcast, pitfalls)
    assert "keepdim" in hint and hint in " ".join(pitfalls.split()), hint
    assert choose_hints(doc, CRASH, "your code raised KeyError: 'x'", pitfalls) == [CRASH_HINT]
    # Raised by the check's own code, no line of the learner's on the way: not "your code".
    outside = "TypeError: vars() argument must have __dict__ attribute"
    assert choose_hints(doc, CRASH, outside, pitfalls) == [OUTSIDE_HINT]
    assert choose_hints(doc, CRASH, "LayerNorm: your file defines no LayerNorm", missing=True) == []
    assert choose_hints(doc, TIMEOUT, "took too long") == [TIMEOUT_HINT]
    assert choose_hints(doc, TODO, "not implemented yet")


def test_a_crash_headline_offers_its_hint() -> None:
    head = check("a", "failed", CORE, CRASH, message="your code raised RuntimeError: shapes")
    head.hints = ["keep the reduced dims"]  # as choose_hints leaves a crash's: one step
    report = make(head, check("b"))
    assert "Stuck? Grade again with -- --hints for a hint." in verdict(report)
    asked = verdict(report, hints=2)
    assert "Hint (idea): keep the reduced dims" in asked and "Stuck?" not in asked, asked
    assert "Stuck?" not in verdict(report, hints=1)  # nothing more to show
    none = check("a", "failed", CORE, CRASH, message="defines no LayerNorm")
    none.hints = []  # a missing name is not the check's mistake: no hint
    assert "Stuck?" not in verdict(make(none))


def test_a_graded_crash_gets_the_pitfall_that_fits(grade) -> None:
    # Reductions without keepdim: the first forward check raises a broadcast error.
    wrong = registry.ROOT / "tests" / "catalogue" / "layernorm" / "forgets_keepdim.py"
    report, output, code = grade("layernorm", wrong)
    assert code == 1 and report["headline"] == "test_output_like_input", output
    assert "Stuck? Grade again with -- --hints for a hint." in output, output
    _, output, _ = grade("layernorm", wrong, "--hints", "2")
    assert "Hint (idea): Broadcasting: keep the reduced dims (keepdim)" in output, output


def test_a_wrong_initial_value_gets_its_own_hint(grade) -> None:
    # The weight is a Parameter, with random values: the hint is about its initial value.
    wrong = registry.ROOT / "tests" / "catalogue" / "rmsnorm" / "random_weight_init.py"
    report, output, code = grade("rmsnorm", wrong, "--hints", "2")
    assert code == 1 and report["headline"] == "test_parameters", output
    assert "Hint (idea): The gain starts at one" in output, output
    assert "must be an nn.Parameter" not in output, output
    plain = registry.ROOT / "tests" / "catalogue" / "rmsnorm" / "plain_tensor_weight.py"
    _, output, _ = grade("rmsnorm", plain, "--hints")
    assert "Hint (idea): The gain is the only learnable tensor" in output, output


def test_hints_hold_no_code() -> None:
    import ast

    from norm_katas.content import pristine
    from norm_katas.engine.report.hints import (
        CODE_IN_HINT,
        CONDITION,
        CRASH_HINT,
        CRASH_SUBJECTS,
        TIMEOUT_HINT,
        TODO_HINT,
        describe,
    )

    assert CODE_IN_HINT.search("self.weight = nn.Parameter(torch.ones(normalized_shape))")
    for code in (
        "x.mean(dims, keepdim=True)", "``x.float()``", "return y.to(x.dtype)",
        "mean(x, keepdim=True)", "y = torch.ones(n)", "for i in range(n): add x[i]",
        "if bias is None: skip it", "def forward(x):", "import torch",
    ):  # fmt: skip
        assert CODE_IN_HINT.search(code), code
    for prose in (
        "rms = √(mean(x²) + ε), over len(normalized_shape) dims", "an nn.Parameter",
        "Built with dropout=0.0, the block drops nothing", "With n = 0 there is nothing to "
        "merge: return before dividing by n", "For each channel: its own mean",
    ):  # fmt: skip
        assert not CODE_IN_HINT.search(prose), prose
    ours = [CRASH_HINT, TODO_HINT, TIMEOUT_HINT]
    ours += [fallback for _, _, fallback in CRASH_SUBJECTS]
    assert not [h for h in ours if CODE_IN_HINT.search(h)]
    with_code = []
    for kata in registry.load():
        for node in ast.walk(ast.parse(kata.suite.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                _, hints = describe(ast.get_docstring(node, clean=False), node.name)
                found = [h for h in hints if CODE_IN_HINT.search(CONDITION.sub("", h))]
                with_code += [f"{kata.suite.name}::{node.name}: {h}" for h in found]
        # A crash's hint from the stub's pitfalls is chosen among those without code.
        assert pristine.PITFALLS in pristine.text(kata), kata.name
    assert not with_code, "hints hold code (say it in prose and maths):\n" + "\n".join(with_code)


def test_new_memory_reads_as_nan_during_a_check_and_settings_come_back() -> None:
    """What torch.empty returns does not depend on the allocator's history (conditions.py)."""
    import torch

    from norm_katas.engine.conditions import uninitialized_memory_filled

    before = torch.are_deterministic_algorithms_enabled()
    with uninitialized_memory_filled():
        assert torch.empty(4).isnan().all()
        assert (torch.empty(2, dtype=torch.int64) == torch.iinfo(torch.int64).max).all()
    assert torch.are_deterministic_algorithms_enabled() == before
    torch.use_deterministic_algorithms(True)  # a strict setting of the learner's stays strict
    try:
        with uninitialized_memory_filled():
            assert not torch.is_deterministic_algorithms_warn_only_enabled()
        assert torch.are_deterministic_algorithms_enabled()
    finally:
        torch.use_deterministic_algorithms(before)
