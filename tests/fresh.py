"""Run a measurement in a new interpreter: nothing of the other tests (their heap, their daemon
threads) is in it, so counts such as the garbage collector's tracked objects are the code's own.

In a worker of the whole suite the same count took 84 s (full collections of a heap of thousands of
tests) and once read 4 objects more than the code makes (another test's thread allocating meanwhile).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

#: This project's tests folder.
TESTS = Path(__file__).parent

#: Loads the module from its file; ``tests`` is this project's folder (as under pytest), not a
#: ``tests`` package some installed library may bring.
_CODE = """import importlib.util, json, sys, types
tests = types.ModuleType("tests")
tests.__path__ = [sys.argv[3]]
sys.modules["tests"] = tests
spec = importlib.util.spec_from_file_location("fresh_module", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps(getattr(module, sys.argv[2])()))
"""


def run_fresh(path: str, func: str) -> Any:
    """``func()`` of the module file ``path`` (no arguments, a JSON-able result) in a new Python;
    its result. Raises AssertionError with the child's error output when it fails."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", _CODE, path, func, str(TESTS)], capture_output=True,
                         text=True, env=env, timeout=600, check=False)
    if out.returncode != 0:
        raise AssertionError(f"{path}: {func}() failed in a new interpreter:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])
