"""`planner import`: foreign graphs (DTR traces, Checkmate and Moccasin graphs, minimalloc CSV) -> graph JSON."""
from __future__ import annotations

from ..importers import FORMATS, importer
from .common import print_json


def add_parser(sub) -> None:
    p = sub.add_parser("import", help="convert a DTR trace / Checkmate or Moccasin graph / minimalloc CSV to a graph JSON")
    p.add_argument("path", help="input file")
    p.add_argument("--format", required=True, choices=sorted(FORMATS))
    p.add_argument("--out", required=True, help="graph JSON to write (.json or .json.gz)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def run(args) -> int:
    g = importer(args.format)(args.path)
    g.save(args.out)
    info = {"graph": args.out, "format": args.format, "ops": len(g.ops), "tensors": len(g.tensors),
            "graph_hash": g.hash}
    if args.json:
        print_json(info)
    else:
        print(f"wrote {args.out}: {len(g.ops)} ops, {len(g.tensors)} tensors (graph {g.hash})")
    return 0
