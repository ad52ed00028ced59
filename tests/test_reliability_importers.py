"""Issue 34, class "tracebacks from importers": decoding, gzip, overflow and size errors of
`import` and `alloc` are one line and exit 2 (the one safe reading layer, ``planner.reading``,
and the stated size limit, ``planner.fields.MAX_BYTES``)."""
from __future__ import annotations

import gzip
import json

import pytest
from cliutil import _err2, run

TRACE = "\n".join(json.dumps(r) for r in [
    {"INSTRUCTION": "CONSTANT", "NAME": "w"}, {"INSTRUCTION": "MEMORY", "NAME": "w", "MEMORY": "64"},
    {"INSTRUCTION": "CALL", "NAME": "mm", "ARGS": ["w"], "RESULT": ["y"], "TIME": "10"},
    {"INSTRUCTION": "MEMORY", "NAME": "y", "MEMORY": "128"}, {"INSTRUCTION": "ALIAS", "NAME": "y", "ALIAS": "-1"},
]).encode()


def _import(tmp_path, capsys, name: str, data: bytes, fmt: str):
    src = tmp_path / name
    src.write_bytes(data)
    out = tmp_path / "g.json"
    res = run(capsys, "import", str(src), "--format", fmt, "--out", str(out))
    if res[0] != 0:
        assert not out.exists()
    return res


CASES = [
    ("trace.jsonl", b"\xff\xfe" + TRACE, "dtr-trace", ["not UTF-8"]),
    ("trace.jsonl.gz", gzip.compress(TRACE)[:-12], "dtr-trace", ["not a readable gzip file"]),
    ("trace.jsonl", gzip.compress(TRACE)[:20], "dtr-trace", ["not a readable gzip file"]),  # gzip by content
    ("trace.jsonl", TRACE.replace(b'"64"', b'"9223372036854775808"'), "dtr-trace", ["beyond the maximum"]),
    ("trace.jsonl", TRACE.replace(b'"10"', b'"1' + b"0" * 400 + b'"'), "dtr-trace", ["TIME"]),
    ("trace.jsonl", b"[" * 100_000, "dtr-trace", ["nested too deeply"]),
    ("cm.json", b'{"nodes": [{"id": 0, "cost_cpu": 1, "cost_ram": Infinity}], "links": []}', "checkmate",
     ["cost_ram must be finite"]),
    ("cm.json", b'{"nodes": [{"id": 0, "cost_cpu": NaN, "cost_ram": 1}], "links": []}', "checkmate",
     ["cost_cpu must be finite"]),
    ("cm.json", b'{"nodes": [{"id": 0, "cost_cpu": 1, "cost_ram": 1e300}], "links": []}', "checkmate",
     ["beyond the maximum"]),
    ("cm.json", b'{"nodes": [{"id": 0, "cost_cpu": true, "cost_ram": 1}], "links": []}', "checkmate",
     ["cost_cpu must be a number"]),
    ("cm.json", b"\x1f\x8b\x08\x00garbage", "checkmate", ["not a readable gzip file"]),
    ("cm.json", b'{"nodes": [{"id": 0, "cost_cpu": 1, "cost_ram": 1}], "links": [{"source": [1], "target": 0}]}',
     "checkmate", ["edge"]),
    ("p.csv", b"id,lower,upper,size\na,0,2,9223372036854775808\n", "minimalloc", ["beyond the maximum"]),
    ("p.csv", b"id,lower,upper,size\na,0,2,4611686018427387904\nb,0,2,4611686018427387904\n", "minimalloc",
     ["beyond the maximum"]),
    ("p.csv", b"id,lower,upper,size\na,0,2,8\xff\n", "minimalloc", ["not UTF-8"]),
    ("p.csv", b"id,lower,upper,size\n" + b"a" * 200_000 + b",0,2,8\n", "minimalloc", ["not a readable CSV"]),
]


@pytest.mark.parametrize("name,data,fmt,needles", CASES, ids=[f"{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_importer_errors_are_one_line(tmp_path, capsys, name, data, fmt, needles):
    rc, out, err = _import(tmp_path, capsys, name, data, fmt)
    _err2(rc, out, err, *needles)


@pytest.mark.parametrize("size", [2**63, 2**62, 2**53 + 1])
def test_alloc_refuses_sizes_beyond_the_maximum(tmp_path, capsys, size):
    p = tmp_path / "p.csv"
    p.write_text(f"id,lower,upper,size\na,0,2,{size}\nb,1,3,8\n")
    rc, out, err = run(capsys, "alloc", "--csv", str(p))
    _err2(rc, out, err, "'a'", "beyond the maximum")


def test_alloc_near_the_maximum_prints_exact_numbers(tmp_path, capsys):
    p = tmp_path / "p.csv"
    big = 2**52
    p.write_text(f"id,lower,upper,size\na,0,2,{big}\nb,1,3,{big - 8}\n")
    rc, out, _ = run(capsys, "alloc", "--csv", str(p), "--json")
    assert rc == 0
    assert json.loads(out)["peak"] == 2 * big - 8  # no int64 or float rounding on the way


def test_alloc_capacity_beyond_the_maximum(tmp_path, capsys):
    p = tmp_path / "p.csv"
    p.write_text("id,lower,upper,size\na,0,2,8\n")
    rc, out, err = run(capsys, "alloc", "--csv", str(p), "--capacity", str(2**63))
    _err2(rc, out, err, "--capacity", "beyond the maximum")
