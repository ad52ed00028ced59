"""Executor: run any plan with PyTorch on one arena of the plan's budget, and prove it.

- ``arena``: one byte buffer on the device; tensors are typed views at planned offsets.
- ``recipe``: reading the capture's replay recipe (targets, arguments, out= overloads, bindings).
- ``replay``: a plan compiled into compute/free steps and run (checked or timed).
- ``reference``: the eager PyTorch step for the same model, batch, seed and optimizer.
- ``user``: the same for eager-captured graphs, from a user's module, batch and optimizer (or the
  zoo / ``--module`` factory rebuilt); ``mutate``: ops writing their arguments in place.
- ``checks``: ``execute(graph, plan, device)`` -> ``ExecReport`` with named checks and figures.
- ``testplans``: plans made to exercise the executor (forced recomputation, colliding addresses).

Notes (what the figures mean)
-----------------------------
*Placement.* Every storage of the plan is a view of the one arena buffer (``Arena.view``), so
colliding offsets really overwrite each other. Ops write into their slot through their ``out=``
overload. Ops that cannot (reported per run as ``outside_ops``, with the bytes they hold
outside the arena): ops without a usable ``out=`` form (``ones``/``arange``-style factories get
one by dropping dtype/device; ``unbind`` has none: the capture records its outputs as fresh
storages, so the executor copies each view into its slot, 0 bytes outside); functional ops
writing a new buffer value over the old one (BatchNorm's ``num_batches_tracked`` ``add``: a
temporary of 8 bytes, then a copy); ``convolution_backward`` when the input gradient is not
wanted (first layer): temporary + copy. Two are rearranged instead: the functional batch norm
runs as ``_native_batch_norm_legit.out`` on the running stats' own storage (bit-exact), and
``convolution_backward`` without a bias gradient computes that gradient into a scratch tensor of
C_out elements outside the arena.

*Memory.* CPU: the peak, over the plan's steps, of the arena storages live at that step
(tracked by the executor while it runs, padded like the validator counts them) plus the
temporaries held outside the arena at that moment. Saved RNG states (5 KB per dropout on CPU,
host memory; on CUDA the generator state lives on the host too) are reported apart and not
counted; kernel-internal scratch (oneDNN workspaces) is invisible on CPU. CUDA:
``max_memory_allocated`` during an unchecked step minus what was allocated before it (the
arena is already there) plus the plan's peak live bytes, a conservative sum.

*Recomputation check.* A 16-byte blake2b digest of each computed value is kept on the host
(check mode only); non-contiguous tensors are copied to a contiguous host tensor for hashing.
These host bytes are not part of the measured memory, and the timed runs make no digests.

*Time.* Plan, plain schedule (method ``none`` through the same executor) and eager PyTorch are
timed interleaved, median of ``repeats`` steps after one warm-up; measured overhead = plan /
plain schedule - 1, to compare with the validator's predicted overhead (cost model).
"""
from .arena import ExecError
from .checks import CHECKS, ExecReport, execute

__all__ = ["CHECKS", "ExecError", "ExecReport", "execute"]
