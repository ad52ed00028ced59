"""Errors that reach the user as one line (exit 2), never as a traceback."""


class UserError(Exception):
    """Bad input from the user: unknown model, bad ratio, malformed file, infeasible budget.

    The CLI prints ``str(exc)`` on one line and exits 2; library callers can catch it.
    """


class GraphError(UserError):
    """A graph fails a structural check; the message names the fault and the id."""


class PlanFormatError(UserError):
    """A plan file is malformed or does not belong to the given graph."""


class CaptureError(UserError):
    """Capture failed; the message names the aten op (and the model line) that failed."""


class ExecError(UserError):
    """The executor cannot run a plan (a recipe or placement it cannot honour); one line."""
