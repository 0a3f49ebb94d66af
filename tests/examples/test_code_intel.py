"""examples/code_intel.py runs as a user runs it: a subprocess, offline, on a real workspace."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.code.workspace import write_workspace

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "code_intel.py"


def test_the_example_maps_searches_and_answers_offline(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "AGCORE_MODEL"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), str(write_workspace(tmp_path)),
         "--question", "charge the card through the payment gateway"],
        capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "the model is SCRIPTED" in done.stdout
    assert "shop/models.py:\n  6: class Invoice" in done.stdout
    assert done.stdout.rstrip().endswith("The best match is shop/billing.py:4-7 (charge_customer).")
