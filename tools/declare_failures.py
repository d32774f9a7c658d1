"""Each wrong catalogue file declares every interview-core check it fails: its EXPECT, and the
rest in its ALSO. A self-test (test_graders.test_catalogue_entry) holds each file to that list,
so that a new collateral failure, a check failing for another check's mistake, is a decision
someone made and not a surprise.

    python -m tools.declare_failures [KATA ...]           # grade, then write ALSO where it differs
    python -m tools.declare_failures --check [KATA ...]   # only list the files that differ

Run it from the repository root with the grading environment's Python, after a change to a
suite, and read the diff: each new name in an ALSO is a check that now fails for a mistake that
is not its own. Make the check blind to that mistake where it can be (measure its own property
only), or declare the dependency with fail_for so that the report folds it under the headline.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from norm_katas.content import catalogue, registry
from tools import golden

ALSO_LINE = re.compile(r'^ALSO = (?:"[^"]*"|\((?:\n    "[^"]*")+\n\))\n', re.M)  # as written
EXPECT_LINE = re.compile(r'^EXPECT = "[^"]*"\n', re.M)


def wrong_files(katas: list[registry.Kata]) -> dict[str, tuple[registry.Kata, Path]]:
    """Key (as golden names it) -> (kata, file) for each wrong file whose EXPECT is a check."""
    found = {}
    for kata in katas:
        for entry in catalogue.entries(kata):
            if entry.expect.startswith("test_"):
                key = entry.path.relative_to(registry.ROOT).as_posix()
                found[key] = (kata, entry.path)
    return found


def failing(grading: dict, tier: str = "core") -> list[str]:
    """The checks of `tier` a grading failed, by function name, in the checklist's order."""
    names = [name.split("[")[0] for name, of, outcome in grading["checks"]
             if of == tier and outcome == "failed"]  # fmt: skip
    return list(dict.fromkeys(names))


def tier_of(grading: dict, check: str) -> str | None:
    return next((of for name, of, _ in grading["checks"] if name.split("[")[0] == check), None)


def declared(path: Path, failing: list[str], expect: str) -> str:
    """The file's text with ALSO naming `failing` beyond EXPECT (no ALSO where there is none)."""
    text = path.read_text(encoding="utf-8")
    also = [name for name in failing if name != expect]
    joined = f'"{", ".join(also)}"'
    # As ruff's formatter writes it in 100 columns: one line, one string in parentheses, or
    # a name a line.
    if not also:
        line = ""
    elif len(f"ALSO = {joined}") <= 100:
        line = f"ALSO = {joined}\n"
    elif len(f"    {joined}") <= 100:
        line = f"ALSO = (\n    {joined}\n)\n"
    else:
        names = [f'    "{name}, "' for name in also[:-1]] + [f'    "{also[-1]}"']
        line = "ALSO = (\n" + "\n".join(names) + "\n)\n"
    if len(re.findall(r"^ALSO\b", text, re.M)) > 1 or re.search(r"^ALSO = .*#", text, re.M):
        raise SystemExit(f"{path}: ALSO written twice, or with a comment: say it above it")
    if ALSO_LINE.search(text):
        return ALSO_LINE.sub(line, text, count=1)
    found = EXPECT_LINE.search(text)
    if found is None:
        raise SystemExit(f'{path}: no EXPECT = "..." line to put ALSO after')
    return text[: found.end()] + line + text[found.end() :]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("katas", nargs="*", help="kata names (default: every kata)")
    parser.add_argument("--check", action="store_true", help="list the files that differ only")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    katas = [registry.get(name) for name in args.katas] or registry.load()
    files = wrong_files(katas)
    gradings = golden._grade_all(registry.ROOT, args.workers, set(files))
    differ = []
    total = 0
    counted = 0
    for key, (_, path) in sorted(files.items()):
        entry = catalogue.Entry.read(path)
        grading = gradings[key]
        if tier_of(grading, entry.expect) != "core":
            continue  # a parity mistake passes the core: its ALSO is its own business
        core = failing(grading)
        counted += 1
        total += len(core)
        # Parity checks an author named stay named while they fail.
        kept = [name for name in entry.also if name in failing(grading, "parity")]
        text = declared(path, [*core, *kept], entry.expect)
        if text != path.read_text(encoding="utf-8"):
            differ.append(key)
            if not args.check:
                path.write_text(text, encoding="utf-8")
    print(f"{counted} wrong files fail {total / max(1, counted):.2f} core checks on average")
    print(("differ" if args.check else "rewrote") + f": {len(differ)}")
    for key in differ:
        print(f"  {key}")
    return 1 if args.check and differ else 0


if __name__ == "__main__":
    sys.exit(main())
