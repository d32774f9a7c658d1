"""python -m norm_katas: see norm_katas.cli."""

import sys

from norm_katas import cli
from norm_katas.grader import runner

if __name__ == "__main__":
    runner.exit_process(cli.main(sys.argv[1:]))
