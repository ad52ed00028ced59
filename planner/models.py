"""Model names -> graphs: synthetic specs, checked-in profiles of the zoo, or a graph file."""
from __future__ import annotations

import logging
from pathlib import Path

from .errors import UserError
from .graph import Graph
from .synthetic import SYNTHETIC_FORMS, is_synthetic, synthetic

log = logging.getLogger(__name__)

PROFILES_DIR = Path(__file__).resolve().parent.parent / "profiles"
EAGER_PREFIX = "eager/"  # profiles/eager/NAME: the zoo captured by the eager route


def profile_path(name: str) -> Path | None:
    """Checked-in profile of a zoo model (``profiles/NAME.json.gz`` or ``.json``), if present."""
    for suffix in (".json.gz", ".json"):
        p = PROFILES_DIR / f"{name}{suffix}"
        if p.is_file():
            return p
    return None


def zoo_names() -> list[str]:
    """Names the model zoo can capture (empty when the zoo is not installed)."""
    try:
        from .profile.zoo import ZOO  # torch-free registry of model builders
    except ImportError:
        return []
    return sorted(ZOO)


def known_models() -> list[str]:
    names = set(zoo_names())
    if PROFILES_DIR.is_dir():
        for p in PROFILES_DIR.iterdir():
            if p.name.endswith(".json.gz"):
                names.add(p.name[: -len(".json.gz")])
            elif p.name.endswith(".json"):
                names.add(p.name[: -len(".json")])
        eager = PROFILES_DIR / EAGER_PREFIX
        if eager.is_dir():
            names.update(EAGER_PREFIX + p.name[: -len(".json.gz")] for p in eager.iterdir()
                         if p.name.endswith(".json.gz"))
    return sorted(names)


def load_model(name: str) -> Graph:
    """Graph for a model name: a synthetic spec, or the checked-in profile of a zoo model."""
    if is_synthetic(name):
        return synthetic(name)
    # never resolved as a path under profiles/: the one sub-folder is eager/, the eager captures
    base = name[len(EAGER_PREFIX):] if name.startswith(EAGER_PREFIX) else name
    if "/" in base or "\\" in base or base.startswith("."):
        raise UserError(f"{name!r} is not a model name; for a graph file give --graph FILE")
    p = profile_path(name)
    if p is not None:
        return Graph.load(str(p))
    if name in zoo_names():
        raise UserError(f"model {name!r} has no checked-in profile; run: python -m planner profile --model {name}")
    raise UserError(f"unknown model {name!r}; known models: {', '.join(known_models()) or '(none checked in)'}; "
                    f"synthetic: {', '.join(SYNTHETIC_FORMS)}")


def load_graph_arg(model: str | None, graph_file: str | None) -> Graph:
    """The graph a command works on: ``--graph FILE`` or ``--model NAME`` (exactly one)."""
    if bool(model) == bool(graph_file):
        raise UserError("give exactly one of --model NAME or --graph FILE")
    return Graph.load(graph_file) if graph_file else load_model(model)  # type: ignore[arg-type]
