"""The arena: every automaton of a drafter, addressed by slot number.

Two views of the same buffers: a numba typed List (one argument for batched native calls) and a Python list
(cheap to index from Python), plus each buffer's address (single-request calls pass addresses: address.py). Slots are reused
after `free`; each allocation gets a fresh generation stamped into the buffer header, so a cursor that still
names an old automaton can tell that it is gone.
"""
import numpy as np
from numba import types
from numba.typed import List

from ._layout import H_GEN, H_SIZE
from .address import address_of

_EMPTY = np.zeros(H_SIZE, np.int32)
_EMPTY[H_GEN] = -1


class Arena:
    def __init__(self):
        self.buffers = List.empty_list(types.Array(types.int32, 1, "C"))
        self.py = []
        self.addr = []  # address_of(py[slot]), kept with it: a stale address would let a call write freed memory
        self._free = []
        self._gen = 0

    def add(self, buf):
        """Stores automaton `buf`; returns (slot, generation)."""
        self._gen += 1
        buf[H_GEN] = self._gen
        if self._free:
            slot = self._free.pop()
            self.set(slot, buf)
        else:
            slot = len(self.py)
            self.buffers.append(buf)
            self.py.append(buf)
            self.addr.append(address_of(buf))
        return slot, self._gen

    def set(self, slot, buf):
        self.buffers[slot] = buf
        self.py[slot] = buf
        self.addr[slot] = address_of(buf)

    def sync(self, slot):
        """After a native call replaced slot's buffer in the typed List (it grew), mirror it."""
        self.py[slot] = buf = self.buffers[slot]
        self.addr[slot] = address_of(buf)

    def free(self, slot):
        self.set(slot, _EMPTY)
        self._free.append(slot)

    def __getitem__(self, slot):
        return self.py[slot]

    def nbytes(self):
        return sum(int(b.nbytes) for b in self.py if b is not _EMPTY)
