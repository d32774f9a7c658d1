"""The ground the learner's code runs on during a grading: loading their file (`loader`), time
limits that measure their code and not the machine (`limits`), watching what it calls
(`tracing`), the simulated CUDA device (`fake_cuda`), torch's differences between releases
(`torch_compat`), the ways a check ends other than by passing (`outcomes`) and the processes a
grading forks (`processes`). Both the checks library and the engine stand on it; it imports
only the content.
"""

# A check's time limit by default, in CPU seconds of the grading's main thread (see limits);
# the slowest reference check uses well under one. --timeout changes it for one grading.
CHECK_TIMEOUT_S = 10.0
