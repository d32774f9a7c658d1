"""The doors a learner comes in by: the command line (`cli`, which nox runs in a clone and
which is `norm-katas` once installed), the notebook magics (`magics`: %kata, %%kata) and
`norm_katas.check()` from plain Python (`api`). Each parses the learner's words into a request
at the door and hands it on; nothing below a door reads the arguments again.
"""
