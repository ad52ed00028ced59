"""Per-op cost: FLOPs from torch's flop counter registry, bytes read + written, and
time = max(flops / peak, bytes / bandwidth) + launch overhead on a named device profile.

``--measure`` replaces the analytical time by the median of real timings of each op on the
device at hand (see ``measure_node``). Views move no data and launch no kernel: cost 0.
"""
from __future__ import annotations

import statistics
import time
from typing import Any

from .devices import DeviceProfile


def analytical_time(flops: float, bytes_moved: int, device: DeviceProfile, precision: str) -> float:
    """Roofline time of one kernel in seconds."""
    peak = device.peak_flops[precision]
    return max(flops / peak, bytes_moved / device.bandwidth) + device.launch_overhead


def count_flops(target: Any, args: tuple, kwargs: dict, out: Any) -> float:
    """FLOPs of one aten call on (fake) tensors, from ``torch.utils.flop_counter``'s registry
    (matmuls, convolutions and their backward, attention); other ops count 0."""
    from torch.utils.flop_counter import flop_registry

    fn = flop_registry.get(getattr(target, "overloadpacket", None))
    if fn is None:
        return 0.0
    return float(fn(*args, out_val=out, **kwargs))


def measure_call(fn, args: tuple, kwargs: dict, repeats: int = 5, sync=None) -> float:
    """Median wall time of ``fn(*args, **kwargs)`` over ``repeats`` runs after one warm-up.
    ``sync`` (e.g. torch.cuda.synchronize) is called around each run for async devices."""
    fn(*args, **kwargs)
    times = []
    for _ in range(repeats):
        if sync:
            sync()
        t0 = time.perf_counter()
        fn(*args, **kwargs)
        if sync:
            sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
