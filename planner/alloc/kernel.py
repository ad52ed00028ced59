"""The DSA search's inner loop compiled with numba: the same search as ``search.PySearch``
(rules and proofs in ``planner.alloc.search``), node for node and in the same order, so
the two give the same offsets and the same node counts (``tests/test_alloc_search.py`` checks
it on generated instances).

Why compiled: the search spends its time in tiny per-node loops (a buffer's neighbours, the
sections it covers, the candidates of a node) where numpy's per-call overhead dominates; the
Python search ran about 5k nodes/s on 300-buffer instances, where minimalloc (C++) runs
orders of magnitude more.

State is one tuple of int64 arrays (indices below), one int64 vector of scalars and the
failure memo (``kernel_memo``). ``run`` returns 1 (placed), 0 (proved infeasible) or -1
(aborted: backtrack limit or deadline; the state is reset) with the memo's table; inside it,
calls and frames pass the same three codes up.
"""
from __future__ import annotations

import time

import numba as nb
import numpy as np

from .kernel_memo import add as _memo_add
from .kernel_memo import digest, mix
from .kernel_memo import has as _memo_has

BIG = np.int64(1) << np.int64(61)

# arrays of the state tuple
SIZE, AL, A, E, NBP, NBI, MINOFF, UNPL, OFFSET, TOTAL, CROSS, SKY, PBUF, SPTR, CLS, CLAST, TRANK, \
    RANK, TRB, TRPREV, TRMO, MOI, MOO, TRSKY, SKYSTK, FKEY = range(26)
# scalars (I_MM: minimalloc's candidate order, else bottom-left; I_SALT: mixed into memo keys)
# (I_MEMO: failures remembered at most, I_MEMO_N: held now; the memo: ``kernel_memo``)
I_N, I_C, I_G, I_ALIGNED, I_TWINS, I_STRONG, I_LIMIT, I_NODES, I_BT, I_DEPTH, I_MEMO, I_MM, I_SALT, \
    I_MEMO_N = range(14)
N_SCALARS = 14


@nb.njit(cache=True)
def _now() -> float:
    with nb.objmode(t="float64"):
        t = time.perf_counter()
    return t


@nb.njit(cache=True, inline="always")
def _raise(minoff, moi, moo, mp, j, top, al, aligned):
    """Raise neighbour j's minimum offset to ``top`` (aligned), logging the old value on the
    trail at mp; the trail's new top."""
    new = top if aligned else -(-top // al[j]) * al[j]
    if new > minoff[j]:
        moi[mp] = j
        moo[mp] = minoff[j]
        mp += 1
        minoff[j] = new
    return mp


@nb.njit(cache=True)
def place(S, I, b, o):
    size, al, a, e = S[SIZE], S[AL], S[A], S[E]
    minoff = S[MINOFF]
    d = I[I_DEPTH]
    top = o + size[b]
    ab, eb = a[b], e[b]
    mp = S[TRMO][d]
    moi, moo = S[MOI], S[MOO]
    nbp, nbi = S[NBP], S[NBI]
    aligned = I[I_ALIGNED] == 1
    if nbp.size > 0:
        for q in range(nbp[b], nbp[b + 1]):
            mp = _raise(minoff, moi, moo, mp, nbi[q], top, al, aligned)
    else:
        for j in range(I[I_N]):
            if j != b and a[j] < eb and e[j] > ab:
                mp = _raise(minoff, moi, moo, mp, j, top, al, aligned)
    S[TRMO][d + 1] = mp
    total, cross, sky, skystk = S[TOTAL], S[CROSS], S[SKY], S[SKYSTK]
    sp = S[TRSKY][d]
    for s in range(ab, eb):
        total[s] -= size[b]
        skystk[sp] = sky[s]
        sp += 1
        sky[s] = max(sky[s], top)
    for s in range(ab + 1, eb):
        cross[s] -= 1
    S[TRSKY][d + 1] = sp
    S[UNPL][b] = 0
    S[OFFSET][b] = o
    c = S[CLS][b]
    S[TRPREV][d] = S[CLAST][c]
    S[CLAST][c] = b
    S[TRB][d] = b
    I[I_DEPTH] = d + 1


@nb.njit(cache=True)
def undo_to(S, I, mark):
    size, a, e = S[SIZE], S[A], S[E]
    minoff, moi, moo = S[MINOFF], S[MOI], S[MOO]
    total, cross, sky, skystk = S[TOTAL], S[CROSS], S[SKY], S[SKYSTK]
    while I[I_DEPTH] > mark:
        d = I[I_DEPTH] - 1
        b = S[TRB][d]
        S[CLAST][S[CLS][b]] = S[TRPREV][d]
        for q in range(S[TRMO][d + 1] - 1, S[TRMO][d] - 1, -1):
            minoff[moi[q]] = moo[q]
        sp = S[TRSKY][d]
        for s in range(a[b], e[b]):
            sky[s] = skystk[sp]
            sp += 1
            total[s] += size[b]
        for s in range(a[b] + 1, e[b]):
            cross[s] += 1
        S[UNPL][b] = 1
        S[OFFSET][b] = -1
        I[I_DEPTH] = d


@nb.njit(cache=True)
def _sections_ok(S, I, lo, hi, floor, last):
    """Section inference over [lo, hi): min effective offset + unplaced total <= C."""
    if I[I_STRONG] == 0:
        return True
    minoff, unpl, fkey, total, pbuf, sptr = S[MINOFF], S[UNPL], S[FKEY], S[TOTAL], S[PBUF], S[SPTR]
    n, C, g = I[I_N], I[I_C], I[I_G]
    for s in range(lo, hi):
        tot = total[s]
        if tot <= 0:
            continue
        level = BIG
        for q in range(sptr[s], sptr[s + 1]):
            j = pbuf[q]
            if j == n or unpl[j] == 0:
                continue
            mo = minoff[j]
            if mo > floor:
                v = mo
            elif mo == floor and fkey[j] > last:
                v = floor
            else:
                v = floor + g
            if v < level:
                level = v
                if level + tot <= C:
                    break  # the section passes: a lower level only makes it pass more
        if level + tot > C:
            return False
    return True


@nb.njit(cache=True, inline="always")
def _twin_forbidden(S, x):
    p = S[CLAST][S[CLS][x]]
    if p < 0:
        return False
    return S[OFFSET][p] + S[SIZE][p] == S[MINOFF][x] and S[TRANK][p] > S[TRANK][x]


@nb.njit(cache=True)
def _candidates(S, I, pool, cu, cm, lo, hi, floor, last, out):
    """The candidates for the next placement among U = pool[cu:cu + cm], in the order they are
    tried, written to pool[out:out + nc] with their offsets at pool[out + nc:out + 2 nc];
    returns nc. Rules in ``search.PySearch._expand``: minimum offset at or above the floor
    (after ``last`` in the tie order at the floor), below C - the largest unplaced total of the
    region, not dominated, not above a higher-ranked twin; ordered by minimum offset, then (the
    bottom-left order) no hole under it first, then leftmost start, then the preorder."""
    size, a, e, minoff, total, sky, rank = S[SIZE], S[A], S[E], S[MINOFF], S[TOTAL], S[SKY], S[RANK]
    fkey, mm = S[FKEY], I[I_MM] == 1
    twins = I[I_TWINS] == 1
    # stranded buffers (``search.PySearch._stranded``): the node fails
    unpl, nbp, nbi = S[UNPL], S[NBP], S[NBI]
    for i in range(cm):
        u = pool[cu + i]
        mo = minoff[u]
        if mo < floor or (mo == floor and fkey[u] <= last):
            top = mo + size[u]
            raised = False
            if nbp.size > 0:
                for q in range(nbp[u], nbp[u + 1]):
                    z = nbi[q]
                    if unpl[z] != 0 and max(floor, minoff[z]) < top:
                        raised = True
                        break
            else:
                for j in range(cm):
                    z = pool[cu + j]
                    if z != u and a[z] < e[u] and e[z] > a[u] and max(floor, minoff[z]) < top:
                        raised = True
                        break
            if not raised:
                return 0
    i1 = 0
    k1 = BIG
    for i in range(cm):
        u = pool[cu + i]
        k = minoff[u] + size[u]
        if k < k1:
            k1, i1 = k, i
    k2 = BIG
    for i in range(cm):
        if i != i1:
            u = pool[cu + i]
            k2 = min(k2, minoff[u] + size[u])
    tmax = 0
    for s in range(lo, hi):
        tmax = max(tmax, total[s])
    omax = I[I_C] - tmax
    cand = np.empty(cm, dtype=np.int64)
    nc = 0
    for i in range(cm):
        u = pool[cu + i]
        mo = minoff[u]
        dom = k2 if i == i1 else k1
        if (mo >= floor and mo <= omax and mo < dom and (mo > floor or fkey[u] > last)
                and not (twins and _twin_forbidden(S, u))):
            cand[nc] = u
            nc += 1
    keys = np.empty((5, nc), dtype=np.int64)
    k0, kh, ka, kr, order = keys[0], keys[1], keys[2], keys[3], keys[4]
    for j in range(nc):
        u = cand[j]
        k0[j] = minoff[u]
        kr[j] = rank[u]
        kh[j] = ka[j] = 0
        if not mm:
            low = BIG
            for s in range(a[u], e[u]):
                low = min(low, sky[s])
            kh[j] = 1 if low < minoff[u] else 0
            ka[j] = a[u]
    for i in range(nc):
        order[i] = i
    for i in range(1, nc):  # insertion sort: candidate lists are short
        x = order[i]
        j = i - 1
        while j >= 0 and (k0[x], kh[x], ka[x], kr[x]) < (k0[order[j]], kh[order[j]], ka[order[j]], kr[order[j]]):
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = x
    for j in range(nc):
        pool[out + j] = cand[order[j]]
        pool[out + nc + j] = k0[order[j]]
    return nc


@nb.njit(cache=True)
def _split(pool, cu, cm, out, a, e, cross, ulo, uhi):
    """The independent groups of U = pool[cu:cu + cm] (no unplaced buffer crosses the cuts
    between them; region [ulo, uhi)): the number of groups, and when there are several, at
    pool[out:] their ids group by group (cm), the group starts (ng + 1), the groups' lo (ng)
    and hi (ng). Groups go smallest first (a failure there is found fast), ties by time."""
    ncut = 0
    for s in range(ulo + 1, uhi):
        if cross[s] == 0:
            ncut += 1
    if ncut == 0:
        return 1
    cuts = np.empty(ncut, dtype=np.int64)
    c = 0
    for s in range(ulo + 1, uhi):
        if cross[s] == 0:
            cuts[c] = s
            c += 1
    lab = np.empty(cm, dtype=np.int64)  # group of each buffer: the cuts at or left of its start
    counts = np.zeros(ncut + 1, dtype=np.int64)
    for q in range(cm):
        x = a[pool[cu + q]]
        lo_, hi_ = 0, ncut
        while lo_ < hi_:
            mid = (lo_ + hi_) // 2
            if cuts[mid] <= x:
                lo_ = mid + 1
            else:
                hi_ = mid
        lab[q] = lo_
        counts[lo_] += 1
    order = np.empty(ncut + 1, dtype=np.int64)
    ng = 0
    for gl in range(ncut + 1):
        if counts[gl] > 0:
            j = ng  # insertion by (count, label): stable in the label order
            while j > 0 and counts[order[j - 1]] > counts[gl]:
                order[j] = order[j - 1]
                j -= 1
            order[j] = gl
            ng += 1
    if ng == 1:
        return 1
    c = out
    for gi in range(ng):
        gl = order[gi]
        pool[out + cm + gi] = c
        glo, ghi = uhi, ulo
        for q in range(cm):
            if lab[q] == gl:
                u = pool[cu + q]
                pool[c] = u
                c += 1
                glo = min(glo, a[u])
                ghi = max(ghi, e[u])
        pool[out + cm + ng + 1 + gi] = glo
        pool[out + cm + 2 * ng + 1 + gi] = ghi
    pool[out + cm + ng] = c
    return ng


# frames of the explicit search stack (numba cannot cache recursive functions: loading one
# from the cache crashed). An OR frame branches over the candidates of one node, an AND frame
# solves the independent groups of a split node one after the other.
F_KIND, F_LO, F_HI, F_LAST, F_FLOOR, F_MARK, F_H1, F_H2, F_IDX, F_CNT, F_U, F_M, F_DATA, F_END = range(14)
N_FIELDS = 14
OR, AND = 0, 1


@nb.njit(cache=True)
def _reserve(pool, top, need):
    """The pool with room for ``need`` more words above ``top`` (doubled when short)."""
    if top + need <= pool.size:
        return pool
    new = np.empty(max(2 * pool.size, top + need), dtype=np.int64)
    for i in range(top):  # a loop: slice assignment alone costs seconds of compile time
        new[i] = pool[i]
    return new


@nb.njit(cache=True)
def _candidate_call(S, I, pool, f):
    """Place the frame's current candidate; the call that completes the rest of its U."""
    j, nc = f[F_IDX], f[F_CNT]
    b = pool[f[F_DATA] + j]
    o = pool[f[F_DATA] + nc + j]
    place(S, I, b, o)
    c = f[F_END]
    for q in range(f[F_U], f[F_U] + f[F_M]):
        if pool[q] != b:
            pool[c] = pool[q]
            c += 1
    return f[F_END], f[F_M] - 1, f[F_LO], f[F_HI], o, S[FKEY][b], b, c


@nb.njit(cache=True)
def _group_call(pool, f):
    """The call that places the frame's current group."""
    g, ng, d = f[F_IDX], f[F_CNT], f[F_DATA]
    s0, s1 = pool[d + f[F_M] + g], pool[d + f[F_M] + g + 1]
    return s0, s1 - s0, pool[d + f[F_M] + ng + 1 + g], pool[d + f[F_M] + 2 * ng + 1 + g], \
        f[F_FLOOR], f[F_LAST], -1, f[F_END]


@nb.njit(cache=True)
def run(S, I, t1, t2, limit, deadline):
    """One run from scratch: (1 found, 0 proved infeasible, -1 cut off (state reset); the
    memo's table (t1, t2), a new one when it grew). The search of ``search.PySearch.node``
    with its recursion on an explicit stack: a call (U, lo, hi, floor, last, placed) is
    evaluated to a result, or pushes a frame and becomes the frame's first child call;
    results go up the frames."""
    undo_to(S, I, 0)
    I[I_LIMIT] = limit
    I[I_BT] = 0
    n, C = I[I_N], I[I_C]
    size, a, e, minoff, cross, total = S[SIZE], S[A], S[E], S[MINOFF], S[CROSS], S[TOTAL]
    clast_, cls_, offset_, trank_, fkey = S[CLAST], S[CLS], S[OFFSET], S[TRANK], S[FKEY]
    twins = I[I_TWINS] == 1
    pool = np.empty(max(64, 4 * n), dtype=np.int64)
    for i in range(n):
        pool[i] = i
    frames = np.zeros((2 * n + 4, N_FIELDS), dtype=np.int64)  # an AND frame's children are OR frames
    nf = 0
    # the pending call: U = pool[cu:cu + cm] (sorted ids), region [clo, chi), floor, last,
    # the buffer just placed (-2: look for cuts everywhere, -1: a group just split off), and
    # the pool's top above everything the call's callers hold
    cu, cm, clo, chi, cfloor, clast, cplaced, ctop = 0, n, 0, total.size, 0, -1, -2, n
    while True:
        r = 2  # 2: a frame was pushed and the pending call is its first child
        if cm == 0:
            r = 1
        else:
            I[I_NODES] += 1
            if I[I_NODES] & 63 == 0 and _now() > deadline:
                r = -1
            elif cm == 1:  # nothing left meets it: straight to its minimum offset
                b = pool[cu]
                o = minoff[b]
                if o < cfloor or (o == cfloor and fkey[b] <= clast) or o + size[b] > C:
                    r = 0
                else:
                    place(S, I, b, o)
                    r = 1
        if r == 2:
            mark = I[I_DEPTH]
            lo, hi = clo, chi
            do_split = cplaced == -2
            if cplaced >= 0:
                for s in range(a[cplaced] + 1, e[cplaced]):
                    if cross[s] == 0:
                        do_split = True
                        break
            pushed = False
            if do_split:
                ulo, uhi = a[pool[cu]], e[pool[cu]]
                for q in range(cu, cu + cm):
                    ulo = min(ulo, a[pool[q]])
                    uhi = max(uhi, e[pool[q]])
                lo, hi = ulo, uhi
                pool = _reserve(pool, ctop, 4 * cm + 4)
                ng = _split(pool, cu, cm, ctop, a, e, cross, ulo, uhi)
                if ng > 1:
                    f = frames[nf]
                    f[F_KIND], f[F_MARK], f[F_FLOOR], f[F_LAST] = AND, mark, cfloor, clast
                    f[F_IDX], f[F_CNT], f[F_M], f[F_DATA], f[F_END] = 0, ng, cm, ctop, ctop + cm + 3 * ng + 1
                    nf += 1
                    cu, cm, clo, chi, cfloor, clast, cplaced, ctop = _group_call(pool, f)
                    pushed = True
            if not pushed:
                h1 = mix(np.uint64(0x9E3779B97F4A7C15), cfloor, np.uint64(0xD6E8FEB86659FD93))
                h2 = mix(np.uint64(0x6A09E667F3BCC909), cfloor, np.uint64(0xA0761D6478BD642F))
                h1 = mix(mix(h1, clast, np.uint64(0xD6E8FEB86659FD93)), I[I_SALT], np.uint64(0xD6E8FEB86659FD93))
                h2 = mix(mix(h2, clast, np.uint64(0xA0761D6478BD642F)), I[I_SALT], np.uint64(0xA0761D6478BD642F))
                h1, h2 = digest(pool, cu, cm, minoff, twins, clast_, cls_, offset_, size, trank_, h1, h2)
                key = (np.int64(h1), np.int64(h2))
                if _memo_has(t1, t2, key[0], key[1]):
                    r = 0
                elif not _sections_ok(S, I, lo, hi, cfloor, clast):
                    t1, t2, I[I_MEMO_N] = _memo_add(t1, t2, I[I_MEMO_N], key[0], key[1], I[I_MEMO])
                    r = 0
                else:
                    pool = _reserve(pool, ctop, 3 * cm)  # candidates, their offsets, the child's U
                    nc = _candidates(S, I, pool, cu, cm, lo, hi, cfloor, clast, ctop)
                    if nc == 0:
                        t1, t2, I[I_MEMO_N] = _memo_add(t1, t2, I[I_MEMO_N], key[0], key[1], I[I_MEMO])
                        r = 0
                    else:
                        f = frames[nf]
                        f[F_KIND], f[F_LO], f[F_HI], f[F_MARK], f[F_H1], f[F_H2] = OR, lo, hi, mark, key[0], key[1]
                        f[F_IDX], f[F_CNT], f[F_U], f[F_M], f[F_DATA], f[F_END] = 0, nc, cu, cm, ctop, ctop + 2 * nc
                        nf += 1
                        cu, cm, clo, chi, cfloor, clast, cplaced, ctop = _candidate_call(S, I, pool, f)
        while r != 2:  # results go up the frames
            if nf == 0:
                if r == -1:
                    undo_to(S, I, 0)
                return r, t1, t2
            f = frames[nf - 1]
            if f[F_KIND] == OR:
                if r == 1:
                    nf -= 1
                    continue
                undo_to(S, I, f[F_MARK])
                if r == -1:
                    nf -= 1
                    continue
                I[I_BT] += 1
                if I[I_BT] > I[I_LIMIT]:
                    nf -= 1
                    r = -1
                    continue
                f[F_IDX] += 1
                if f[F_IDX] < f[F_CNT]:
                    cu, cm, clo, chi, cfloor, clast, cplaced, ctop = _candidate_call(S, I, pool, f)
                    r = 2
                else:
                    t1, t2, I[I_MEMO_N] = _memo_add(t1, t2, I[I_MEMO_N], f[F_H1], f[F_H2], I[I_MEMO])
                    nf -= 1
                    r = 0
            else:
                if r != 1:
                    undo_to(S, I, f[F_MARK])
                    nf -= 1
                    continue
                f[F_IDX] += 1
                if f[F_IDX] < f[F_CNT]:
                    cu, cm, clo, chi, cfloor, clast, cplaced, ctop = _group_call(pool, f)
                    r = 2
                else:
                    nf -= 1
                    r = 1
