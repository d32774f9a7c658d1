"""Tools for kata authors, never run while grading: `new_kata` writes a kata's every part as a
skeleton, `record` records stubs and their hashes (stubs --record), `notebook_writer` writes the
kata notebooks, `docs_writer` regenerates the examples in the README and docs/. `cli` holds their
commands. No other room imports this one (import-linter's contract in pyproject.toml).
"""
