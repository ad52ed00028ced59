"""Memory as one number, as DTR's own simulator models it: an allocation fits when the live
total stays within the capacity; there are no addresses (offsets are assigned afterwards).
The address-level memory is ``planner.addrspace.AddressSpace``."""
from __future__ import annotations


class ScalarArena:
    """Memory as one number: no addresses, no fragmentation (DTR's simulator)."""
    addresses = False

    def __init__(self, capacity: int, alignment: int, policy: str = "first-fit"):
        self.capacity = capacity
        self.align = max(1, alignment)
        self.used = 0
        self.peak_used = 0
        self.peak_addr = 0
        self.log: list[int] = []  # block ids in event order: b >= 0 allocated, ~b released

    def find(self, size: int, high: bool = False) -> int | None:
        return 0 if self.used + size <= self.capacity else None

    def take(self, off: int, size: int, block: int) -> None:
        self.used += size
        self.peak_used = max(self.peak_used, self.used)
        self.log.append(block)

    def release(self, off: int, size: int, block: int = -1) -> None:
        self.used -= size
        self.log.append(~block)

    def free_bytes(self) -> int:
        return self.capacity - self.used
