"""Issue 34, class "bad input accepted silently" (options) and "--help": one validation of the
shared options for every command, -q/-v on either side of the subcommand, --solver refused
where it is not used, exit codes and ranges in --help."""
from __future__ import annotations

import pytest
from cliutil import run

from planner.cli import build_parser, main

CSV = "id,lower,upper,size\na,0,2,8\n"


def _argv(cmd: str, t) -> list[str]:
    (t / "p.csv").write_text(CSV)
    return {
        "solve": ["solve", "--model", "chain:4", "--ratio", "1", "--method", "none"],
        "alloc": ["alloc", "--csv", str(t / "p.csv")],
        "study": ["study", "--models", "chain:4", "--ratios", "1", "--methods", "none", "--out", str(t / "s")],
        "execute": ["execute", "--plan", str(t / "plan.json")],
        "info": ["info", "--model", "chain:4"],
    }[cmd]


BAD = [
    ("solve", "--time-limit", ["0", "-5", "nan", "inf", "x"]),
    ("solve", "--threads", ["0", "-1", "1.5"]),
    ("solve", "--seed", ["-1", str(2**32)]),
    ("solve", "--alignment", ["0", "-512"]),
    ("alloc", "--time-limit", ["0", "-1", "nan"]),
    ("alloc", "--threads", ["0"]),
    ("alloc", "--capacity", ["-1"]),
    ("study", "--time-limit", ["0", "nan"]),
    ("study", "--wall-limit", ["0", "-1", "inf"]),
    ("study", "--threads", ["0"]),
    ("study", "--jobs", ["0", "-2"]),
    ("execute", "--threads", ["-2", "0"]),
    ("execute", "--repeats", ["-1"]),
    ("info", "--top", ["-3"]),
]


@pytest.mark.parametrize("cmd,opt,value", [(c, o, v) for c, o, vs in BAD for v in vs])
def test_shared_option_values_are_checked_the_same_everywhere(tmp_path, capsys, cmd, opt, value):
    rc, out, err = run(capsys, *_argv(cmd, tmp_path), f"{opt}={value}")
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and f"argument {opt}" in err, err
    assert not (tmp_path / "s").exists()  # study: nothing created


@pytest.mark.parametrize("flag", ["-q", "--quiet", "-v", "--verbose"])
def test_quiet_and_verbose_after_the_subcommand(capsys, flag):
    rc, out, _ = run(capsys, "info", "--model", "chain:4", flag)
    assert rc == 0 and "chain:4" in out
    args = build_parser().parse_args(["info", "--model", "chain:4", flag])
    assert args.quiet == flag.startswith(("-q", "--q")) and args.verbose == flag.startswith(("-v", "--v"))
    args = build_parser().parse_args([flag, "info", "--model", "chain:4"])  # before it still works
    assert args.quiet == flag.startswith(("-q", "--q"))


@pytest.mark.parametrize("method", ["exact", "lp", "coop", "none"])
def test_solver_is_refused_where_it_is_not_used(capsys, method):
    rc, out, err = run(capsys, "solve", "--model", "chain:4", "--ratio", "1", "--method", method, "--solver", "cbc")
    assert rc == 2 and out == "" and "--solver cbc applies to checkmate and milp-joint only" in err


def test_solver_highs_is_accepted_everywhere(capsys):
    rc, _, _ = run(capsys, "solve", "--model", "chain:4", "--ratio", "1", "--method", "none", "--solver", "highs")
    assert rc == 0


@pytest.mark.parametrize("name", ["../profiles/unet-tiny", "profiles/unet-tiny", "./unet-tiny", "/tmp/unet-tiny"])
def test_model_names_are_not_paths(capsys, name):
    rc, out, err = run(capsys, "info", "--model", name)
    assert out == ""
    assert rc == 2 and "not a model name" in err and "--graph FILE" in err


def test_help_states_exit_codes_descriptions_and_ranges(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    top = capsys.readouterr().out
    assert "exit codes:" in top and "  2  a user error" in top and "  3  the method found no plan" in top
    p = build_parser()
    sub = next(a for a in p._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, sp in sub.choices.items():
        text = sp.format_help()
        assert sp.description, name
        assert "exit codes:" in text, name
    helps = {name: " ".join(sp.format_help().split()) for name, sp in sub.choices.items()}
    assert ">= 1 (default 1)" in helps["solve"]                     # --threads
    assert "in [0, 4294967295]" in helps["solve"]                   # --seed
    assert "(default first-fit)" in helps["solve"]                  # --alloc-policy
    assert "(default 5)" in helps["info"] and ">= 0" in helps["info"]  # --top
    assert "(default 60)" in helps["alloc"]                          # alloc --time-limit
    assert "checkmate, dtr-trace, minimalloc" in helps["import"]     # import --format


def test_quiet_hides_solver_banners(capfd):
    """PuLP's HiGHS prints a banner at the C level (fd 1, sent to stderr during solves)."""
    rc = main(["solve", "--model", "chain:8", "--ratio", "0.8", "--method", "checkmate", "--time-limit", "10", "-q"])
    out, err = capfd.readouterr()
    assert rc == 0
    assert "HiGHS" not in err and "HiGHS" not in out.split("time")[0]
