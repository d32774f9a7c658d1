# The grading plugin gives the kata suites their `kata` and `device` fixtures.
pytest_plugins = ["norm_katas.engine.plugin"]
