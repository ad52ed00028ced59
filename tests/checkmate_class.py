"""The test-side check that an op sequence lies in Checkmate's class, written apart from the
library's own sequence code so that the two can disagree."""


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
