"""The CLI run in this process, and the check every user-error test makes."""
from __future__ import annotations

from planner.cli import main


def run(capsys, *argv):
    """(exit code, stdout, stderr) of ``python -m planner ARGV``."""
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _err2(rc, out, err, *needles):
    """Exit 2 with one line on stderr, no traceback, naming every needle."""
    assert rc == 2, (rc, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in err, (n, err)
