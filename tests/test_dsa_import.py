"""`planner import --format minimalloc`: the baseline schedule has the CSV's lifetimes and sizes."""
from __future__ import annotations

from planner.alloc import live_lower_bound
from planner.alloc.csv_format import format_csv
from planner.alloc.instances import guillotine
from planner.analysis import baseline_peak, storage_intervals
from planner.cli import main
from planner.graph import Graph
from planner.importers.minimalloc import load_minimalloc
from planner.registry import solve


def _overlaps(l1, u1, l2, u2):
    return l1 < u2 and l2 < u1


def test_import_keeps_lifetimes_and_sizes(tmp_path):
    bufs, _, _ = guillotine(40, seed=3, grain=512)
    src = tmp_path / "p.csv"
    src.write_text(format_csv(bufs))
    g = load_minimalloc(str(src))
    roots, start, end = storage_intervals(g)
    iv = {g.tensors[r].name: (s, e) for r, s, e in zip(roots.tolist(), start.tolist(), end.tolist())}
    by = {b.id: b for b in bufs}
    for b in bufs:
        t = next(t for t in g.tensors if t.name == b.id)
        assert t.bytes == b.size and (t.meta["lower"], t.meta["upper"]) == (b.lower, b.upper)
    # Same "alive together" relation as the CSV (op intervals are inclusive).
    for x in bufs:
        for y in bufs:
            (sx, ex), (sy, ey) = iv[x.id], iv[y.id]
            assert (sx <= ey and sy <= ex) == _overlaps(by[x.id].lower, by[x.id].upper, by[y.id].lower, by[y.id].upper)
    assert baseline_peak(g) == live_lower_bound(bufs)
    assert solve(g, baseline_peak(g) * 2, "none").status in ("optimal", "feasible")


def test_import_command(tmp_path, capsys):
    src = tmp_path / "p.csv"
    src.write_text("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n")
    out = tmp_path / "g.json"
    assert main(["import", str(src), "--format", "minimalloc", "--out", str(out)]) == 0
    g = Graph.load(str(out))
    assert len(g.ops) == 3 and g.meta["source"] == "minimalloc"


def test_import_malformed_is_a_user_error(tmp_path, capsys):
    src = tmp_path / "p.csv"
    src.write_text("id,lower,upper,size\nb1,0,3\n")
    assert main(["import", str(src), "--format", "minimalloc", "--out", str(tmp_path / "g.json")]) == 2
    assert "line 2" in capsys.readouterr().err


def test_sizes_are_not_padded(tmp_path):
    # sizes that are no multiple of 512: the graph declares alignment 1, so the baseline
    # schedule's peak is the CSV's live-bytes bound exactly
    bufs, _, _ = guillotine(30, seed=1, capacity=3000, grain=3)
    src = tmp_path / "p.csv"
    src.write_text(format_csv(bufs))
    g = load_minimalloc(str(src))
    assert g.alignment == 1 and baseline_peak(g) == live_lower_bound(bufs) == 3000
