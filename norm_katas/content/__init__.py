"""The content: which katas exist and where each of their parts is.

`registry` reads katas.toml (one entry per kata, naming its stub, solution, suite, catalogue,
follow-ups and notebook); `pristine` holds the tool's own copies of the stubs and notebooks,
identified by their content; `followups` reads the mock's follow-up questions; `catalogue`
indexes the wrong and correct files the self-tests grade. The lowest room: it imports nothing
else of norm_katas, and neither torch nor pytest (the noxfile reads the registry before torch
exists).
"""
