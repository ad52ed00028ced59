from planner.cli import main


def test_solve_none_chain(capsys):
    assert main(["solve", "--model", "chain:16", "--ratio", "1.0", "--method", "none", "--json"]) == 0
    assert '"valid": true' in capsys.readouterr().out
