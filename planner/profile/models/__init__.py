"""Plain-torch model definitions of the zoo (random weights, no downloads, no torchvision).

Each builder returns an ``nn.Module`` whose ``forward(*batch)`` returns ``(loss,)``: the loss
is part of the module so that ``aot_export_module`` sees one scalar training objective."""
from __future__ import annotations

from contextlib import contextmanager

_INPLACE = [True]


def inplace() -> bool:
    """Whether models built now use in-place ops (``ReLU(inplace=True)``, ``out += identity``)
    as their reference implementations do. The aot route builds them without (its checked-in
    graphs were captured from that spelling; functionalization removes in-place ops anyway)."""
    return _INPLACE[0]


@contextmanager
def functional_spelling():
    old = _INPLACE[0]
    _INPLACE[0] = False
    try:
        yield
    finally:
        _INPLACE[0] = old
