"""The grading engine: one request, graded, into one report.

A door parses the learner's words into a `request.Request` (its `options` defined once); the
`runner` grades it in a child process, where pytest runs the kata's suite under the grading
`plugin`, which loads the learner's file (`learners`), applies the time limits (`timer`), and
keeps a run's state (`grading`), whose `checklist` hands the results to the `report`, which
the printer turns into the checklist and headline; `conditions` are what every check runs
under, and `json_report` writes --report-json. `server` keeps a warm grader behind a pipe;
`shards` shares a slow suite's checks with a forked worker; `perf` times --perf; `suggest`
words the commands it suggests as this learner types them.
Above it: practice and the doors. Below it: the checks library, the runtime and the content.
"""
