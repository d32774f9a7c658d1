"""Self-tests for the verdict's wording: summary lines that agree with the exit status, folding
only what shares the headline's cause, the learner's prints, and hints only when asked.

Most build a Report by hand and print it: the wording is the report's, whatever the kata."""

from __future__ import annotations

import io
import re
from pathlib import Path

from norm_katas.grader import registry
from norm_katas.grader.door import NOTEBOOK
from norm_katas.grader.report import (
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


def test_an_information_report_is_listed_apart_and_never_counted() -> None:
    info = check("test_bandwidth", "skipped", INFO, message="on the CPU there is nothing")
    report = make(check("a"), check("b", tier=PARITY), info)
    text = verdict(report)
    assert "skipped" not in score_line(text), text
    assert "\nInformation\n  test bandwidth: on the CPU there is nothing" in text, text
    assert report.solved and report.strict_solved and report.tally() == (2, 2)


def test_failures_of_another_kind_are_not_folded_under_the_headline() -> None:
    head = check("a", "failed", CORE, CRASH, message="your code raised AttributeError: x")
    same = check("b", "failed", CORE, CRASH, message="your code raised AttributeError: x")
    slow = [check(f"t{i}", "failed", CORE, TIMEOUT, message="took too long") for i in range(2)]
    text = verdict(make(head, same, *slow))
    assert "1 more check fails, probably for the same reason" in text, text
    assert "2 more checks fail differently (timed out; -- --all shows each)" in text, text


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
    assert title and "in eval without running statistics" in title[1], title


def test_hints_are_chosen_for_the_failure() -> None:
    from norm_katas.grader import stubs
    from norm_katas.grader.report import CRASH_HINT, TIMEOUT_HINT, TODO, choose_hints

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
    pitfalls = stubs.split_pitfalls(stubs.text(registry.get("layernorm")))[1]
    broadcast = (
        "your code raised RuntimeError: The size of tensor a (8) must match the size of tensor "
        "b (5) at non-singleton dimension 2, at katas/layernorm.py line 18: var = ..."
    )
    (hint,) = choose_hints(doc, CRASH, broadcast, pitfalls)
    assert "keepdim" in hint and hint in " ".join(pitfalls.split()), hint
    assert choose_hints(doc, CRASH, "your code raised KeyError: 'x'", pitfalls) == [CRASH_HINT]
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


# Hints that still hold code, per suite: the debt left to rewrite. It may only shrink: a suite
# with more fails (a new hint with code), and one with fewer asks for its number to be lowered.
CODE_HINTS_LEFT = {
    "batchnorm": 21,
    "batchnorm_backward": 12,
    "dropout": 15,
    "droppath": 10,
    "groupnorm": 9,
    "layernorm": 11,
    "layernorm_backward": 0,
    "prepost_norm": 0,
    "rmsnorm": 0,
    "syncbatchnorm": 0,
    "triton_rmsnorm": 0,
}


def test_hints_hold_no_code() -> None:
    import ast

    from norm_katas.grader import report, stubs
    from norm_katas.grader.report import CODE_IN_HINT, CONDITION, describe

    assert CODE_IN_HINT.search("self.weight = nn.Parameter(torch.ones(normalized_shape))")
    for code in ("x.mean(dims, keepdim=True)", "``x.float()``", "return y.to(x.dtype)"):
        assert CODE_IN_HINT.search(code), code
    for prose in ("rms = √(mean(x²) + ε), over len(normalized_shape) dims", "an nn.Parameter"):
        assert not CODE_IN_HINT.search(prose), prose
    ours = [report.CRASH_HINT, report.TODO_HINT, report.TIMEOUT_HINT]
    ours += [fallback for _, _, fallback in report.CRASH_SUBJECTS]
    assert not [h for h in ours if CODE_IN_HINT.search(h)]
    found = {}
    for kata in registry.load():
        with_code = []
        for node in ast.walk(ast.parse(kata.suite.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                _, hints = describe(ast.get_docstring(node, clean=False), node.name)
                with_code += [h for h in hints if CODE_IN_HINT.search(CONDITION.sub("", h))]
        found[kata.suite.stem.removeprefix("test_")] = len(with_code)
        # A crash's hint from the stub's pitfalls is chosen among those without code.
        assert stubs.PITFALLS in stubs.text(kata), kata.name
    assert found == CODE_HINTS_LEFT, f"hints with code per suite (rewrite them as prose): {found}"
