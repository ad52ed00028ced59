"""`planner list`: models, methods, device profiles."""
from __future__ import annotations

from ..models import known_models
from ..registry import methods
from ..synthetic import SYNTHETIC_FORMS
from .common import print_json


def add_parser(sub) -> None:
    p = sub.add_parser("list", help="list models, methods and device profiles")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def _device_profiles() -> list[str]:
    try:
        from ..profile.devices import DEVICES
    except ImportError:
        return []
    return sorted(DEVICES)


def run(args) -> int:
    ms = methods()
    out = {"models": known_models(), "synthetic": list(SYNTHETIC_FORMS),
           "methods": {m.name: {"kind": m.kind, "summary": m.summary} for m in ms.values()},
           "device_profiles": _device_profiles()}
    if args.json:
        print_json(out)
        return 0
    print("models:   " + (", ".join(out["models"]) or "(none checked in)"))
    print("synthetic: " + ", ".join(out["synthetic"]))
    print("methods:")
    for m in ms.values():
        print(f"  {m.name:<11} {m.kind:<9} {m.summary}")
    if out["device_profiles"]:
        print("device profiles: " + ", ".join(out["device_profiles"]))
    return 0
