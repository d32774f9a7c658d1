"""The practice around grading: watch mode, timed mock interviews, the attempt history,
progress, and resets of the learner's files. Grading itself is the `engine`'s."""
