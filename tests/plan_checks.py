"""Test-side checks of constructed op sequences, written apart from the library's own
sequence code so that the two can disagree."""
import time


def in_checkmates_class(p, seq) -> bool:
    """First computations in captured order; reruns ascending and once per stage."""
    done, rec = 0, []
    for k in seq:
        if k == done:
            if rec != sorted(set(rec)):
                return False
            done, rec = done + 1, []
        elif k > done:
            return False
        else:
            rec.append(k)
    return done == p.n and not rec


def assert_places_and_validates(g, p, seq, source: str) -> None:
    """``seq`` placed without a cap by the construction's placement, and its plan valid."""
    from formulations.constructive import _constructed, place_fitting
    from planner.validator import validate

    placed = place_fitting(p, list(seq), None, 2.0, 0, 1)
    assert placed is not None
    rep = validate(g, _constructed(p, placed, None, "constructive", time.perf_counter(), source).plan)
    assert rep.valid, rep.violations[:1]
