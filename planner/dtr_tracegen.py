"""Synthetic DTR-format traces (``planner import --format dtr-trace``) shaped like eager PyTorch.

DTR's published traces are not available offline, so tests and ``bench/bench_simulator.py``
use traces written here the way an instrumented eager run would log them: Python locals
are released when reassigned, autograd keeps COPY'd handles of saved tensors until the
backward op that used them (some saved tensors are never an argument of a logged op),
gradients accumulate in place, optimizers update parameters and their state with MUTATE.

- ``mlp_trace(layers)``  forward, loss, backward, SGD step at the end.
- ``gan_trace(layers)``  a GAN step: discriminator on real and generated samples, its Adam
  step in the middle of the iteration, then the generator's loss through the updated
  discriminator, the generator's backward and Adam step; label tensors are CONSTANTs that
  appear mid-trace.
- ``rnn_trace(steps)``   an unrolled recurrent cell whose gates are saved by handle until
  their backward (the case where eager lifetimes differ most from last use).
"""
from __future__ import annotations

import json

KB = 1024


class TraceWriter:
    """Appends DTR trace instructions; ``text()`` is the JSON-lines file."""

    def __init__(self) -> None:
        self.rows: list[dict] = [{"INSTRUCTION": "ANNOTATE", "ANNOTATION": "START"}]
        self.n = 0
        self.in_backward = False

    def fresh(self, stem: str) -> str:
        self.n += 1
        return f"{stem}{self.n}"

    def constant(self, name: str, nbytes: int) -> str:
        self.rows += [{"INSTRUCTION": "CONSTANT", "NAME": name},
                      {"INSTRUCTION": "MEMORY", "NAME": name, "MEMORY": str(nbytes)}]
        return name

    def call(self, op: str, args: list[str], nbytes: int, time_ns: int, alias: int = -1, stem: str = "t") -> str:
        out = self.fresh(stem)
        self.rows += [{"INSTRUCTION": "CALL", "NAME": op, "ARGS": list(args), "RESULT": [out], "TIME": str(time_ns)},
                      {"INSTRUCTION": "MEMORY", "NAME": out, "MEMORY": str(nbytes)},
                      {"INSTRUCTION": "ALIAS", "NAME": out, "ALIAS": str(alias)}]
        return out

    def mutate(self, op: str, args: list[str], time_ns: int, idx: tuple[int, ...] = (0,)) -> None:
        self.rows.append({"INSTRUCTION": "MUTATE", "NAME": op, "ARGS": list(args),
                          "MUTATE": [str(i) for i in idx], "TIME": str(time_ns)})

    def copy(self, src: str) -> str:
        dst = self.fresh("saved")
        self.rows.append({"INSTRUCTION": "COPY", "DST": dst, "SRC": src})
        return dst

    def release(self, *names: str) -> None:
        self.rows += [{"INSTRUCTION": "RELEASE", "NAME": n} for n in names]

    def backward(self) -> None:
        if not self.in_backward:
            self.rows.append({"INSTRUCTION": "ANNOTATE", "ANNOTATION": "BACKWARD"})
            self.in_backward = True

    def text(self) -> str:
        return "\n".join(json.dumps(r) for r in self.rows) + "\n"


def _mlp_forward(w: TraceWriter, x: str, params: list[str], act: int, t_mm: int) -> tuple[str, list[tuple]]:
    """Linear + ReLU layers; returns the output and per layer (input, saved handles)."""
    tape = []
    h = x
    for p in params:
        z = w.call("mm", [h, p], act, t_mm)
        saved_in = w.copy(h)               # autograd saves the matmul's input
        a = w.call("relu", [z], act, t_mm // 10)
        saved_z = w.copy(z)                # ... and ReLU's input (read by its backward)
        w.release(z)
        if h != x:
            w.release(h)                   # the Python local is reassigned
        tape.append((saved_in, saved_z, p))
        h = a
    return h, tape


def _mlp_backward(w: TraceWriter, g: str, tape: list[tuple], grads: dict[str, str], act: int, pbytes: int,
                  t_mm: int, need_input_grad: bool = True) -> str | None:
    """Backward through the layers of ``tape`` (reverse); parameter gradients accumulate in
    place into ``grads`` (created on first use). Returns the input gradient."""
    w.backward()
    for k, (saved_in, saved_z, p) in enumerate(reversed(tape)):
        dz = w.call("threshold_backward", [g, saved_z], act, t_mm // 10)
        w.release(g, saved_z)
        dw = w.call("mm_backward_weight", [dz, saved_in], pbytes, t_mm)
        if p in grads:
            w.mutate("add_", [grads[p], dw], t_mm // 20)
            w.release(dw)
        else:
            grads[p] = dw
        last = k == len(tape) - 1
        if last and not need_input_grad:
            w.release(dz, saved_in)
            return None
        g = w.call("mm_backward_input", [dz, p], act, t_mm)
        w.release(dz, saved_in)
    return g


def _adam(w: TraceWriter, params: list[str], grads: dict[str, str], state: dict[str, tuple[str, str]],
          pbytes: int, t_el: int) -> None:
    for p in params:
        m, v = state[p]
        g = grads[p]
        w.mutate("mul_", [m], t_el)
        w.mutate("add_", [m, g], t_el)
        w.mutate("mul_", [v], t_el)
        w.mutate("addcmul_", [v, g, g], t_el)
        denom = w.call("sqrt", [v], pbytes, t_el)
        w.mutate("add_", [denom], t_el)
        w.mutate("addcdiv_", [p, m, denom], t_el)
        w.release(denom)


def mlp_trace(layers: int = 8, act: int = 64 * KB, pbytes: int = 16 * KB, t_mm: int = 100_000) -> str:
    w = TraceWriter()
    params = [w.constant(f"w{i}", pbytes) for i in range(layers)]
    x = w.constant("x", act)
    out, tape = _mlp_forward(w, x, params, act, t_mm)
    loss = w.call("sum", [out], 4, t_mm // 10, stem="loss")
    g = w.call("ones_like", [loss], 4, 1000)
    w.backward()
    g2 = w.call("sum_backward", [g, out], act, t_mm // 10)
    w.release(g, out)
    grads: dict[str, str] = {}
    _mlp_backward(w, g2, tape, grads, act, pbytes, t_mm, need_input_grad=False)
    for p in params:  # SGD
        w.mutate("add_", [p, grads[p]], t_mm // 20)
        w.release(grads[p])
    return w.text()


def gan_trace(layers: int = 6, act: int = 64 * KB, pbytes: int = 16 * KB, t_mm: int = 100_000) -> str:
    w = TraceWriter()
    gp = [w.constant(f"gw{i}", pbytes) for i in range(layers)]
    dp = [w.constant(f"dw{i}", pbytes) for i in range(layers)]
    state = {p: (w.constant(f"m_{p}", pbytes), w.constant(f"v_{p}", pbytes)) for p in gp + dp}
    z = w.constant("z", act)
    real = w.constant("real", act)
    t_el = t_mm // 20

    def bce(out: str, label: str) -> tuple[str, str]:
        lab = w.constant(w.fresh(label), 4 * KB)   # torch.ones / zeros made mid-step
        loss = w.call("bce", [out, lab], 4, t_el, stem="loss")
        return loss, lab

    def bce_backward(loss: str, out: str, lab: str) -> str:
        w.backward()
        g = w.call("bce_backward", [loss, out, lab], act, t_el)
        w.release(loss, lab, out)
        return g

    # discriminator step
    fake, g_tape = _mlp_forward(w, z, gp, act, t_mm)
    d_real, tape_r = _mlp_forward(w, real, dp, act, t_mm)
    l_real, lab_r = bce(d_real, "ones")
    fake_d = w.call("detach", [fake], act, 1000, alias=0)
    d_fake, tape_f = _mlp_forward(w, fake_d, dp, act, t_mm)
    w.release(fake_d)
    l_fake, lab_f = bce(d_fake, "zeros")
    d_grads: dict[str, str] = {}
    _mlp_backward(w, bce_backward(l_real, d_real, lab_r), tape_r, d_grads, act, pbytes, t_mm, need_input_grad=False)
    _mlp_backward(w, bce_backward(l_fake, d_fake, lab_f), tape_f, d_grads, act, pbytes, t_mm, need_input_grad=False)
    _adam(w, dp, d_grads, state, pbytes, t_el)
    for p in dp:
        w.mutate("zero_", [d_grads[p]], t_el)
    # generator step, through the updated discriminator
    d_out, tape_g = _mlp_forward(w, fake, dp, act, t_mm)
    l_gen, lab_g = bce(d_out, "ones")
    g = _mlp_backward(w, bce_backward(l_gen, d_out, lab_g), tape_g, d_grads, act, pbytes, t_mm)
    w.release(fake)
    g_grads: dict[str, str] = {}
    _mlp_backward(w, g, g_tape, g_grads, act, pbytes, t_mm, need_input_grad=False)
    _adam(w, gp, g_grads, state, pbytes, t_el)
    w.release(*(d_grads[p] for p in dp), *(g_grads[p] for p in gp))
    return w.text()


def rnn_trace(steps: int = 12, hidden: int = 32 * KB, pbytes: int = 16 * KB, t_mm: int = 100_000) -> str:
    """h_{k+1} = tanh(x_k W + h_k U), 4 gates computed as one matmul and split; autograd
    keeps the whole gate buffer by handle until the step's backward, though that backward
    reads only two of its slices."""
    w = TraceWriter()
    W = w.constant("W", pbytes)
    U = w.constant("U", pbytes)
    xs = [w.constant(f"x{k}", hidden) for k in range(steps)]
    h = w.constant("h0", hidden)
    tape = []
    for k in range(steps):
        gates = w.call("addmm", [xs[k], W, h], 4 * hidden, t_mm, stem="gates")
        held = w.copy(gates)                       # saved whole, read by no logged op
        i_g = w.call("slice", [gates], hidden, 100, alias=0)
        f_g = w.call("slice", [gates], hidden, 100, alias=0)
        w.release(gates)
        c = w.call("mul", [i_g, f_g], hidden, t_mm // 10)
        hn = w.call("tanh", [c], hidden, t_mm // 10)
        tape.append((held, i_g, f_g, c, hn, h))
        h = hn
    loss = w.call("sum", [h], 4, t_mm // 10, stem="loss")
    w.backward()
    g = w.call("sum_backward", [loss, h], hidden, t_mm // 10)
    dW = dU = None
    for held, i_g, f_g, c, hn, hp in reversed(tape):
        dc = w.call("tanh_backward", [g, hn], hidden, t_mm // 10)
        dgates = w.call("mul_backward", [dc, i_g, f_g], 4 * hidden, t_mm // 10)
        w.release(held, i_g, f_g, c, dc)
        if hn != h:
            w.release(hn)
        gW = w.call("addmm_backward_W", [dgates, hp], pbytes, t_mm)
        gU = w.call("addmm_backward_U", [dgates, hp], pbytes, t_mm)
        if dW is None:
            dW, dU = gW, gU
        else:
            w.mutate("add_", [dW, gW], t_mm // 20)
            w.mutate("add_", [dU, gU], t_mm // 20)
            w.release(gW, gU)
        g_new = w.call("addmm_backward_h", [dgates, U], hidden, t_mm)
        w.release(dgates, g)
        g = g_new
    w.release(g, h, loss)
    for x in xs:
        w.release(x)
    w.mutate("add_", [W, dW], t_mm // 20)
    w.mutate("add_", [U, dU], t_mm // 20)
    return w.text()


TRACES = {"mlp": mlp_trace, "gan": gan_trace, "rnn": rnn_trace}
