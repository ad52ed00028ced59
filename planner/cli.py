"""Command line: ``python -m planner COMMAND ...`` (also the ``coop-planner`` script).

Each command lives in ``planner/commands/NAME.py`` with ``add_parser(subparsers)`` and
``run(args) -> int``. User errors print one line on stderr and exit 2, with no traceback.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys

from .errors import UserError

# Order is the order of `--help`.
COMMANDS = ("list", "info", "profile", "solve", "validate", "execute", "study", "plot", "import", "alloc")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's usage dump is not one line
        raise UserError(f"{self.prog}: {message}")


EXIT_CODES = """exit codes:
  0  done: a plan was found, the plan is valid, the checks passed
  1  an invalid plan, a failed execution check, or a method error
  2  a user error: bad option, unreadable or malformed input, unwritable --out (one line on stderr)
  3  the method found no plan (infeasible or timeout): a result, printed in full
  130  interrupted (Ctrl-C or SIGTERM)"""


def _global_flags(p: argparse.ArgumentParser, default) -> None:
    p.add_argument("-v", "--verbose", action="store_true", default=default, help="debug logging on stderr")
    p.add_argument("-q", "--quiet", action="store_true", default=default,
                   help="no progress lines or solver banners on stderr during long solves")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; ``only``: just that command's (its module alone is imported: start-up)."""
    p = _Parser(prog="planner", description="Coop Planner: rematerialization and address planning for training memory",
                epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    _global_flags(p, False)
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS if only is None else (only,):
        try:
            mod = importlib.import_module(f"planner.commands.{name.replace('-', '_')}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name == f"planner.commands.{name.replace('-', '_')}_cmd":
                continue  # command not built yet
            raise
        mod.add_parser(sub)
    helps = {a.dest: a.help for a in sub._choices_actions}
    for name, sp in sub.choices.items():
        # -q/-v after the subcommand too; SUPPRESS keeps a value given before it
        _global_flags(sp, argparse.SUPPRESS)
        if sp.description is None and helps.get(name):
            sp.description = helps[name][0].upper() + helps[name][1:] + "."
        sp.epilog, sp.formatter_class = EXIT_CODES, argparse.RawDescriptionHelpFormatter
    return p


# third-party loggers kept at WARNING under -v: numba's compiler logs every bytecode it reads
# at DEBUG (thousands of lines when the DSA kernel compiles)
QUIET_LIBRARIES = ("numba",)


def _show_progress(quiet: bool, verbose: bool) -> None:
    """Progress of long solves (planner.progress) on stderr, one plain line each."""
    from .progress import LOGGER

    if quiet:
        LOGGER.setLevel(logging.WARNING)
        return
    LOGGER.setLevel(logging.INFO)
    if not verbose and not any(getattr(h, "_coop_progress", False) for h in LOGGER.handlers):
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(logging.Formatter("%(message)s"))
        h._coop_progress = True  # main() may run several times in one process (tests)
        LOGGER.addHandler(h)
        LOGGER.propagate = False  # not twice through the root handler


def _sigterm_as_interrupt():
    """``kill PID`` stops a command the way Ctrl-C does: cleanup runs (a study kills its
    workers and releases its cells), exit 130."""
    import signal

    def handler(signum, frame):
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (an embedding program): leave its handler alone
        return None


def main(argv: list[str] | None = None) -> int:
    previous = _sigterm_as_interrupt()
    try:
        return _main(argv)
    finally:
        if previous is not None:  # main() may run inside a longer-lived process (tests)
            import signal

            signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str] | None) -> int:
    try:
        words = sys.argv[1:] if argv is None else argv
        first = next((w for w in words if not w.startswith("-")), None)
        # a known command as the first word: import its module only (`alloc` starts in 0.1 s less)
        args = build_parser(first if first in COMMANDS else None).parse_args(argv)
        logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                            format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
        for noisy in QUIET_LIBRARIES:  # -v is for the planner's own log, not compiler internals
            logging.getLogger(noisy).setLevel(logging.WARNING)
        _show_progress(quiet=args.quiet, verbose=args.verbose)
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `planner info ... | head`: the reader left, nothing to report
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
