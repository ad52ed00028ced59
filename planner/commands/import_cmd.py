"""`planner import`: foreign graphs (DTR traces, Checkmate and Moccasin graphs, minimalloc CSV) -> graph JSON."""
from __future__ import annotations

from ..errors import UserError
from ..importers import FORMATS, importer
from .common import print_json
from .outpath import check_out_path, report_write_error, try_write


def add_parser(sub) -> None:
    p = sub.add_parser("import", help="convert a DTR trace / Checkmate or Moccasin graph / minimalloc CSV to a graph JSON")
    p.add_argument("path", help="input file")
    p.add_argument("--format", required=True, choices=sorted(FORMATS),
                   help=f"input format, one of {', '.join(sorted(FORMATS))}")
    p.add_argument("--out", required=True, help="graph JSON to write (.json or .json.gz)")
    p.add_argument("--frees", choices=("release", "last-use"), default=None,
                   help="dtr-trace: free a storage when its last handle is released (default, as eager "
                        "PyTorch) or right after its last reader (the idealised plain schedule)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def run(args) -> int:
    check_out_path(args.out, inputs=[args.path], suffixes=(".json", ".json.gz"))
    frees = getattr(args, "frees", None)
    if frees is not None and args.format != "dtr-trace":
        raise UserError("--frees applies to --format dtr-trace only")
    load = importer(args.format)
    g = load(args.path, frees=frees) if frees is not None else load(args.path)
    write_error = try_write(lambda: g.save(args.out), args.out)
    if write_error:
        print(f"imported {args.path}: {len(g.ops)} ops, {len(g.tensors)} tensors (graph {g.hash})")
        return report_write_error(write_error) or 2
    info = {"graph": args.out, "format": args.format, "ops": len(g.ops), "tensors": len(g.tensors),
            "graph_hash": g.hash, "frees": g.frees}
    if args.json:
        print_json(info)
    else:
        print(f"wrote {args.out}: {len(g.ops)} ops, {len(g.tensors)} tensors, frees at {g.frees} (graph {g.hash})")
    return 0
