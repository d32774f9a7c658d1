"""Not a kata: lets `nox` run from inside katas/, where it looks for ./noxfile.py.

The sessions are the repository's (../noxfile.py), run from the repository's folder as if nox
had been started there; paths you give (--impl) are still taken from where you are.
"""

import os
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.chdir(ROOT)  # nox moved into katas/ to load this file; the sessions expect the repository
globals().update(runpy.run_path(str(ROOT / "noxfile.py"), run_name="noxfile"))
