"""`planner alloc` end to end: the minimalloc example, statuses, exit codes, atomic output."""
from __future__ import annotations

import json

from planner.alloc import check_solution
from planner.alloc.csv_format import format_csv, read_csv
from planner.alloc.instances import guillotine

EXAMPLE = "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n"


def test_alloc_solves_the_minimalloc_example(tmp_path, cli):
    src = tmp_path / "p.csv"
    src.write_text(EXAMPLE)
    out = tmp_path / "s.csv"
    rc, stdout, _ = cli("alloc", "--csv", str(src), "--capacity", "12", "--out", str(out), "--json")
    assert rc == 0
    info = json.loads(stdout)
    assert info["status"] == "optimal" and info["peak"] == 12 and info["valid"]
    bufs, offs = read_csv(out)
    assert offs is not None and check_solution(bufs, offs, 12) == []
    assert sorted(offs.values()) == [0, 4, 4, 8, 8]  # the published solution: 8,8,4,4,0 up to symmetry
    assert offs == {"b1": 8, "b2": 8, "b3": 4, "b4": 4, "b5": 0}


def test_alloc_exact_engine_on_the_example(tmp_path, cli):
    src = tmp_path / "p.csv"
    src.write_text(EXAMPLE)
    rc, stdout, _ = cli("alloc", "--csv", str(src), "--engine", "cp-sat", "--json")
    info = json.loads(stdout)
    assert rc == 0 and info["peak"] == 12 and info["status"] == "optimal"


def test_alloc_infeasible_capacity_exit_3_and_nothing_written(tmp_path, cli):
    src = tmp_path / "p.csv"
    src.write_text(EXAMPLE)
    out = tmp_path / "s.csv"
    rc, stdout, _ = cli("alloc", "--csv", str(src), "--capacity", "11", "--out", str(out), "--json")
    assert rc == 3 and json.loads(stdout)["status"] == "infeasible"
    assert not out.exists()


def test_alloc_tight_instance_uses_the_exact_search(tmp_path, cli):
    bufs, _, cap = guillotine(60, seed=1)
    src = tmp_path / "t.csv"
    src.write_text(format_csv(bufs))
    out = tmp_path / "s.csv"
    rc, stdout, _ = cli("alloc", "--csv", str(src), "--capacity", str(cap), "--out", str(out),
                         "--json", "--time-limit", "30")
    info = json.loads(stdout)
    assert rc == 0 and info["peak"] <= cap
    bufs2, offs = read_csv(out)
    assert check_solution(bufs2, offs, cap) == []
    if info["method"] == "greedy":
        assert info["exact"] is False


def test_alloc_greedy_flag_is_reported_as_greedy(tmp_path, cli):
    src = tmp_path / "p.csv"
    src.write_text(EXAMPLE)
    rc, stdout, _ = cli("alloc", "--csv", str(src), "--greedy", "--json")
    info = json.loads(stdout)
    assert rc == 0 and info["method"] == "greedy" and info["exact"] is False
    rc, stdout, _ = cli("alloc", "--csv", str(src), "--greedy")
    assert rc == 0 and "greedy best-fit (heuristic" in stdout


def test_alloc_malformed_csv_names_the_line(tmp_path, cli):
    src = tmp_path / "bad.csv"
    src.write_text("id,lower,upper,size\nb1,0,3,4\nb2,3,nine,4\n")
    rc, stdout, err = cli("alloc", "--csv", str(src))
    assert rc == 2 and "line 3" in err and stdout == ""
    rc, _, err = cli("alloc", "--csv", str(tmp_path / "missing.csv"))
    assert rc == 2 and "not found" in err


def test_alloc_same_seed_same_file(tmp_path, cli):
    bufs, _, cap = guillotine(50, seed=2)
    src = tmp_path / "t.csv"
    src.write_text(format_csv(bufs))
    outs = []
    for k in range(2):
        out = tmp_path / f"s{k}.csv"
        rc, _, _ = cli("alloc", "--csv", str(src), "--capacity", str(cap), "--seed", "7",
                        "--out", str(out), "--json")
        assert rc == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1]
