"""The doors a learner comes in by: the command line (`cli`, which nox runs in a clone and
which is `norm-katas` once installed), the notebook magics (`magics`: %kata, %%kata, and
`notebook_mock`: %kata_mock) and `norm_katas.check()` from plain Python (`api`). Each parses the
learner's words into a request at the door and hands it on; nothing below a door reads the
arguments again. The notebook's doors share `cells` (a cell graded as a file, and what a cell
shows) and `render` (the verdict, a mock's scorecard and debrief, as HTML).
"""
