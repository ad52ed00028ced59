"""End-to-end CLI: through main(argv) and one real subprocess."""
import json
import subprocess
import sys

import pytest

from planner.cli import main


def run(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_solve_json_fields(capsys, tmp_path):
    plan = tmp_path / "p.json"
    rc, out, err = run(["solve", "--model", "chain:64", "--ratio", "1.0", "--method", "none", "--json",
                        "--out", str(plan)], capsys)
    assert rc == 0
    d = json.loads(out)
    for key in ("model", "method", "ratio", "budget_bytes", "baseline_peak_bytes", "status", "overhead",
                "peak_bytes", "fragmentation", "lower_bound", "gap", "solve_seconds", "valid", "plan_path"):
        assert key in d
    assert d["valid"] is True and d["status"] == "optimal" and d["overhead"] == 0.0
    assert d["plan_path"] == str(plan) and plan.is_file()
    rc, out, _ = run(["validate", "--plan", str(plan), "--json"], capsys)
    assert rc == 0 and json.loads(out)["valid"] is True


def test_validate_names_rule_and_step_of_corrupted_plan(capsys, tmp_path):
    plan = tmp_path / "p.json"
    assert main(["solve", "--model", "chain:8", "--ratio", "1.0", "--method", "none", "--out", str(plan)]) == 0
    d = json.loads(plan.read_text())
    # corrupt: free the first activation right after computing it
    first = next(i for i, s in enumerate(d["steps"]) if s[0] == "compute")
    tensor = d["steps"][first][2][0][0]
    d["steps"].insert(first + 1, ["free", tensor])
    plan.write_text(json.dumps(d))
    capsys.readouterr()
    rc, out, _ = run(["validate", "--plan", str(plan)], capsys)
    assert rc == 1
    assert "INVALID" in out and "freed-then-used" in out and f"step {first + 2}" in out


@pytest.mark.parametrize("argv, needle", [
    (["solve", "--model", "nosuch", "--ratio", "0.5"], "unknown model 'nosuch'"),
    (["solve", "--model", "chain:8", "--ratio", "1.5"], "ratio must be in (0, 1]"),
    (["solve", "--model", "chain:8", "--ratio", "0"], "ratio must be in (0, 1]"),
    (["solve", "--model", "chain:8", "--ratio", "abc"], "ratio must be a number"),
    (["solve", "--model", "chain:8", "--ratio", "0.01", "--method", "none"], "below the minimum feasible budget"),
    (["solve", "--model", "chain:8", "--ratio", "0.5", "--method", "magic"], "unknown method 'magic'"),
    (["validate", "--plan", "/nonexistent/plan.json"], "plan file not found"),
    (["info", "--graph", "/nonexistent/g.json"], "graph file not found"),
    (["solve", "--ratio", "0.5"], "one of the arguments --model --graph is required"),
])
def test_user_errors_are_one_line_exit_2(argv, needle, capsys):
    rc, out, err = run(argv, capsys)
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in err


def test_min_budget_error_states_ratio(capsys):
    rc, _, err = run(["solve", "--model", "chain:8", "--ratio", "0.01", "--method", "none"], capsys)
    assert rc == 2 and "= ratio 0." in err


def test_malformed_plan_file(capsys, tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"kind": "plan", "schema_version": 1, "steps": [["jump", 1]]}')
    rc, _, err = run(["validate", "--plan", str(p), "--model", "chain:4"], capsys)
    assert rc == 2 and "malformed plan" in err


def test_plan_for_other_graph_is_rejected(capsys, tmp_path):
    p = tmp_path / "p.json"
    assert main(["solve", "--model", "chain:8", "--ratio", "1.0", "--method", "none", "--out", str(p)]) == 0
    capsys.readouterr()
    rc, _, err = run(["validate", "--plan", str(p), "--model", "chain:9"], capsys)
    assert rc == 2 and "another graph" in err  # one rule with execute and plot (issue 34)


def test_no_partial_output_on_error(capsys, tmp_path):
    out = tmp_path / "never.json"
    rc, _, _ = run(["solve", "--model", "chain:8", "--ratio", "0.01", "--out", str(out)], capsys)
    assert rc == 2 and not out.exists() and not list(tmp_path.iterdir())


def test_infeasible_is_a_result_not_an_error(capsys, tmp_path):
    out = tmp_path / "p.json"
    rc, stdout, _ = run(["solve", "--model", "chain:8", "--ratio", "0.5", "--method", "none", "--json",
                         "--out", str(out)], capsys)
    d = json.loads(stdout)
    assert rc == 3 and d["status"] == "infeasible" and d["plan_path"] is None and not out.exists()


def test_list_and_info(capsys):
    rc, out, _ = run(["list", "--json"], capsys)
    assert rc == 0 and "none" in json.loads(out)["methods"]
    rc, out, _ = run(["info", "--model", "ushape:3", "--json"], capsys)
    d = json.loads(out)
    assert rc == 0 and d["ops"] > 0 and 0 < d["min_feasible_ratio"] <= 1
    rc, out, _ = run(["info", "--model", "layered:40:2"], capsys)
    assert rc == 0 and "baseline peak" in out


def test_graph_file_round_trip(capsys, tmp_path):
    from planner.analysis import baseline_peak
    from planner.plan import Plan
    from planner.synthetic import ushape
    g = tmp_path / "g.json"
    ushape(3).save(str(g))
    plan = tmp_path / "plan.json"
    rc, out, _ = run(["solve", "--graph", str(g), "--ratio", "1.0", "--method", "none", "--json",
                      "--out", str(plan)], capsys)
    d = json.loads(out)
    # the plain schedule of ushape:3 has a placement within its own peak (ratio 1.0): every op
    # once is optimal, and the plan names the graph the file holds
    assert rc == 0 and d["status"] == "optimal" and d["valid"] is True and d["overhead"] == 0
    assert d["baseline_peak_bytes"] == baseline_peak(ushape(3))
    assert Plan.load(str(plan)).graph_hash == ushape(3).hash


def test_real_subprocess():
    p = subprocess.run([sys.executable, "-m", "planner", "solve", "--model", "chain:64", "--ratio", "1.0",
                        "--method", "none", "--json"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["valid"] is True
    p = subprocess.run([sys.executable, "-m", "planner", "solve", "--model", "x", "--ratio", "2"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1


def test_long_solves_report_progress_on_stderr_only():
    # exact below the plain peak: incumbent, bounds and MILP figures on stderr, JSON alone on stdout
    args = [sys.executable, "-m", "planner", "solve", "--model", "chain:16", "--ratio", "0.6",
            "--method", "exact", "--time-limit", "20", "--json"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["status"] == "optimal"
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("[")]
    assert any("exact: incumbent" in ln or "exact: no incumbent" in ln for ln in lines), p.stderr
    assert any("bound" in ln for ln in lines) and all("s] exact:" in ln for ln in lines), lines
    q = subprocess.run(args[:3] + ["--quiet"] + args[3:], capture_output=True, text=True, timeout=120)
    assert q.returncode == 0 and not [ln for ln in q.stderr.splitlines() if ln.startswith("[")], q.stderr
