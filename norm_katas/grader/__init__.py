"""Grading machinery for norm-katas: registry, learner-file loading, pytest plugin and report.

Kata authors need only `checks` (helpers for writing checks); the rest is machinery.
This package must import without torch: the noxfile reads the registry before torch exists.
"""
