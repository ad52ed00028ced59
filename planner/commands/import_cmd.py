"""`planner import`: foreign graphs (DTR traces, Checkmate graphs, minimalloc CSV) -> graph JSON."""
from __future__ import annotations

from ..errors import UserError
from ..importers import FORMATS, importer
from .common import print_json


def add_parser(sub) -> None:
    p = sub.add_parser("import", help="convert a DTR trace / Checkmate graph / minimalloc CSV to a graph JSON")
    p.add_argument("path", help="input file")
    p.add_argument("--format", required=True, choices=sorted(FORMATS))
    p.add_argument("--out", required=True, help="graph JSON to write (.json or .json.gz)")
    p.add_argument("--frees", choices=("release", "last-use"), default=None,
                   help="dtr-trace: free a storage when its last handle is released (default, as eager "
                        "PyTorch) or right after its last reader (the idealised plain schedule)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def run(args) -> int:
    frees = getattr(args, "frees", None)
    if frees is not None and args.format != "dtr-trace":
        raise UserError("--frees applies to --format dtr-trace only")
    load = importer(args.format)
    g = load(args.path, frees=frees) if frees is not None else load(args.path)
    g.save(args.out)
    info = {"graph": args.out, "format": args.format, "ops": len(g.ops), "tensors": len(g.tensors),
            "graph_hash": g.hash, "frees": g.frees}
    if args.json:
        print_json(info)
    else:
        print(f"wrote {args.out}: {len(g.ops)} ops, {len(g.tensors)} tensors, frees at {g.frees} (graph {g.hash})")
    return 0
