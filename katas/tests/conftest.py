"""`python -m pytest katas/tests/test_<kata>.py` in a clone (tests/test_<kata>.py in a
workspace of `norm-katas init`) runs your tests against your own layer, ../<kata>.py.

The grader (`nox -s kata-<name> -- --tests`, `norm-katas grade <name> --tests`) runs them
against its many layers instead and leaves this file out. Here the `kata` fixture is your own
module, so you can run your tests while you write them: a failure may be your layer's mistake
or your test's. Without a GPU, a Triton kata's kernels run in Triton's interpreter; a test of
SyncBatchNorm gets `ranks` as in the grader (norm-katas must be importable).
This file is norm-katas' own: `norm-katas init` writes it again if it is missing.
"""

import importlib.util
import os
import sys
from pathlib import Path

import pytest


def pytest_configure(config):
    if "TRITON_INTERPRET" not in os.environ:  # read by Triton when a kernel is defined
        try:
            import torch

            gpu = torch.cuda.is_available()
        except ImportError:
            gpu = False
        if not gpu:
            os.environ["TRITON_INTERPRET"] = "1"


@pytest.fixture(scope="module")
def kata(request):
    """Your layer: ../<kata>.py for tests/test_<kata>.py."""
    stem = Path(request.module.__file__).stem.removeprefix("test_")
    path = Path(__file__).resolve().parent.parent / f"{stem}.py"
    if not path.is_file():
        pytest.fail(f"{path} does not exist: these tests test the layer you write there.")
    spec = importlib.util.spec_from_file_location(stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[stem] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def ranks(request, tmp_path):
    """ranks(step, world_size=2): step(rank, world_size) on each rank of a process group."""
    try:
        from norm_katas.engine.proving.ranks import Ranks
    except ImportError:
        pytest.skip("ranks comes with norm-katas: pip install norm-katas, or run in the clone")
    return Ranks(tmp_path, 60.0, Path(request.module.__file__))
