"""Self-tests for the documentation: every example in README.md and docs/*.md is what the tool
prints now, produced by grading the real files it names (norm_katas.authoring.docs_writer), and the
generated text (the katas' page, the clone and pip lines) follows the registry and the settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from norm_katas.authoring import docs_writer
from norm_katas.content import registry
from norm_katas.engine import server


def test_every_example_and_generated_block_is_current(tmp_path: Path) -> None:
    # A grader of its own: the examples are graded as `python -m norm_katas` typed, where the
    # self-tests' warm grader grades as through nox.
    client = server.Client(env=docs_writer.grader_env(str(tmp_path)))
    assert not client.error, client.error
    try:
        stale = docs_writer.stale(docs_writer.client_grader(client, tmp_path))
    finally:
        client.close()
    shown = [str(path.relative_to(registry.ROOT)) for path in stale]
    assert not stale, f"stale examples in {', '.join(shown)}: run `{docs_writer.COMMAND}`"


def test_every_example_is_shown_and_every_page_is_in_the_site() -> None:
    assert docs_writer.names_used() == set(docs_writer.EXAMPLES), (
        "an example no page shows, or the reverse"
    )
    nav = (registry.ROOT / "mkdocs.yml").read_text()
    for page in (registry.ROOT / "docs").glob("*.md"):
        assert f": {page.name}" in nav, f"docs/{page.name} is not in mkdocs.yml's nav"


def test_a_stale_example_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check fails both ways: a report edited by hand (the README's old rtol) is stale."""
    page = tmp_path / "page.md"
    page.write_text("<!-- example: usage -->\n```console\nrtol=1e-07\n```\n<!-- /example -->\n")
    monkeypatch.setattr(docs_writer, "files", lambda: [page])
    found = docs_writer.stale(lambda kata, args: ("", 0))
    assert list(found) == [page] and "--timeout abc: expected a number" in found[page]


def test_the_clone_line_is_a_placeholder_until_the_address_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(registry, "repository", lambda: None)
    assert f"git clone {docs_writer.PLACEHOLDER} norm-katas" in docs_writer.clone_lines()
    assert "git+<the repository URL>" in docs_writer.pip_line()
    monkeypatch.setattr(registry, "repository", lambda: "https://github.com/owner/name")
    assert "git clone https://github.com/owner/name.git\ncd name\n" in docs_writer.clone_lines()
    assert "pip install git+https://github.com/owner/name " in docs_writer.pip_line()


def test_messages_point_at_sections_that_exist() -> None:
    """The grader's messages send the learner to a section of the docs: it must be there."""
    import re

    sources = [registry.ROOT / "noxfile.py", *(registry.ROOT / "norm_katas").rglob("*.py")]
    pointers = {
        (title, page)
        for source in sources
        for title, page in re.findall(r"'([A-Z][^']+)' in (docs/[\w-]+\.md)", source.read_text())
    }
    assert pointers, "the messages name no section"
    for title, page in pointers:
        headings = re.findall(r"^#+ (.+)$", (registry.ROOT / page).read_text(), re.M)
        assert title.lower() in (h.lower() for h in headings), f"{page} has no '{title}'"


def test_the_workflow_runs_the_sessions_of_ci_run() -> None:
    """GitHub Actions and .ci/run run the same nox sessions, each without arguments (the
    mutants of every kata), so that neither keeps a list of katas to fall out of step."""
    import re

    def sessions(text: str) -> set[str]:
        found = re.findall(r"nox -s ([\w-]+(?: -- [\w -]+)?)", text)
        return {s for s in found if not s.startswith("kata-")}  # the quick start: a step

    ci_run = (registry.ROOT / ".ci" / "run").read_text()
    workflow = (registry.ROOT / ".github" / "workflows" / "ci.yml").read_text()
    matrix = set(re.search(r"session: \[([^\]]+)\]", workflow)[1].replace(" ", "").split(","))
    wanted = {s.split(" --")[0] for s in sessions(ci_run)} - {"reset"}
    assert wanted <= matrix, wanted - matrix
    assert "mutants" in sessions(ci_run) and 'nox -s "$SESSION"' in workflow
    listed = [s for s in sessions(ci_run) | sessions(workflow) if s.startswith("mutants --")]
    assert not listed, f"the mutants of some katas only: {listed}"


def test_the_readme_names_the_command_that_runs_the_self_tests() -> None:
    """A contributor finds `nox -s tests`, which CI runs, beside the quick start."""
    readme = (registry.ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Quick start")
    assert "`nox -s tests`" in readme[start : readme.index("\n## ", start + 1)]
    assert "nox -s tests" in (registry.ROOT / ".ci" / "run").read_text(encoding="utf-8")
