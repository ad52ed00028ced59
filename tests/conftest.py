"""Shared test setup: thread limits for the 2-core CI machine and the fixtures every test file
may use. The random graph generator is ``tests/graphgen.py``."""
import os

import pytest

# Keep solver and torch threads in check on the 2-core CI machine.
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture
def cli(capsys):
    """``cli(*argv)`` runs ``python -m planner ARGV`` in this process: (exit code, stdout, stderr)."""
    from planner.cli import main

    def run(*argv: str) -> tuple[int, str, str]:
        rc = main(list(argv))
        out, err = capsys.readouterr()
        return rc, out, err

    return run
