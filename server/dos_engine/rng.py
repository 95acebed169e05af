"""Deterministic shuffling that anyone can re-derive from a revealed seed.

The algorithm does not use Python's ``random`` module, so it can be re-implemented in any
language:

1. **Keys.** ``derive_key(seed, *labels)`` is SHA-256 over ``b"DOS/1"`` followed by, for the
   seed and then each label, its UTF-8 length as 4 big-endian bytes and its UTF-8 bytes.
2. **Stream.** Block *i* (i = 0, 1, ...) of a key's stream is ``SHA-256(key || i as 8
   big-endian bytes)``; blocks are concatenated.
3. **Uniform integers.** ``randbelow(n)`` reads the next 8 bytes as a big-endian unsigned
   integer *x*; if *x* >= 2^64 - (2^64 mod n) it is rejected and the next 8 bytes are read;
   otherwise the result is *x* mod n.
4. **Shuffle.** Fisher–Yates: for *i* from len-1 down to 1, swap items *i* and
   ``randbelow(i + 1)``.

The engine keys its shuffles as follows (``seed`` is the game's seed string):

* first-dealer draw (2.2): ``derive_key(seed, "dealer", str(k))`` for the k-th deck needed (k=0 first);
* round *r*'s seed (r = 1, 2, ...): ``round_seed(seed, r) = derive_key(seed, "round", str(r)).hex()``;
* the deal of round r: ``derive_key(round_seed, "deal")``;
* the k-th reshuffle of the discard pile in round r (4.4): ``derive_key(round_seed, "reshuffle", str(k))``.

Piles are lists whose *last* item is the top card.
"""

from __future__ import annotations

import hashlib
import importlib
import struct
from collections.abc import Callable
from typing import Protocol, TypeVar

T = TypeVar("T")

_TWO_64 = 1 << 64
# randbelow(n) accepts every value below 2^64 - (2^64 mod n), so for n <= 128 every value
# below 2^64 - 128.
_NEVER_REJECTED_BELOW_N = 128
_NEVER_REJECTED = _TWO_64 - _NEVER_REJECTED_BELOW_N
_FOUR_U64 = struct.Struct(">4Q")
_SEVEN_FF = b"\xff" * 7
_COUNTERS = [n.to_bytes(8, "big") for n in range(64)]  # the block counters of a deck and more
# The u64s of n blocks, by n (as many as _COUNTERS): a Struct made once, not a format per call.
_BLOCKS_U64 = [struct.Struct(f">{4 * n}Q") for n in range(len(_COUNTERS) + 1)]


class _Sha256(Protocol):
    def update(self, data: bytes, /) -> None: ...
    def digest(self) -> bytes: ...
    def hexdigest(self) -> str: ...


def _own_sha256() -> Callable[[bytes], _Sha256]:
    """CPython's own SHA-256 (module _sha2 from 3.12, _sha256 in 3.11), else hashlib's.

    The digests are the same; for the short inputs hashed here (a key and a counter, a seed)
    it costs about a quarter fewer instructions than OpenSSL's, which hashlib uses, whose
    setup of each hash object outweighs the hashing of one block.
    """
    for name in ("_sha2", "_sha256"):
        try:
            own: Callable[[bytes], _Sha256] = importlib.import_module(name).sha256
        except (ImportError, AttributeError):
            continue
        return own
    return hashlib.sha256


_sha256 = _own_sha256()


def derive_key(seed: str, *labels: str) -> bytes:
    digest = _sha256(b"DOS/1")
    for part in (seed, *labels):
        raw = part.encode("utf-8")
        digest.update(len(raw).to_bytes(4, "big"))
        digest.update(raw)
    return digest.digest()


def round_seed(seed: str, round_no: int) -> str:
    return derive_key(seed, "round", str(round_no)).hex()


def seed_commitment(seed: str) -> str:
    """SHA-256 hex of a seed string: published before a deal, checked when the seed is revealed."""
    return _sha256(seed.encode("utf-8")).hexdigest()


class HashStream:
    """The SHA-256 counter-mode stream of one key, read as big-endian unsigned 64-bit integers."""

    __slots__ = ("_counter", "_key", "_values")

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._counter = 0
        self._values: list[int] = []

    def next_u64(self) -> int:
        if not self._values:
            block = _sha256(self._key + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
            self._values = list(reversed(_FOUR_U64.unpack(block)))
        return self._values.pop()

    def randbelow(self, n: int) -> int:
        if n <= 0:
            raise ValueError("randbelow needs n > 0")
        limit = _TWO_64 - (_TWO_64 % n)
        while True:
            value = self.next_u64()
            if value < limit:
                return value % n


def shuffle(items: list[T], key: bytes, top: int | None = None) -> None:
    """Shuffle ``items`` in place with Fisher–Yates driven by the key's stream.

    Reads the same stream as :class:`HashStream`, but hashes the blocks a whole deck needs in
    one go (a deal is on the hot path of self-play).

    With ``top``, only the first ``top`` swaps are made: they put the last ``top`` items where
    the whole shuffle puts them (a later swap never touches a place above its own), and leave
    the others half shuffled. Drawing a few cards off the top needs no more.
    """
    count = len(items)
    if count < 2:
        return
    steps = count - 1 if top is None else max(0, min(top, count - 1))
    continue_shuffle(items, key, count - 1, 0, steps)


def continue_shuffle(items: list[T], key: bytes, start: int, taken: int, steps: int) -> int:
    """Make ``steps`` more swaps of the shuffle of ``items`` by ``key``: those of i = ``start``,
    ``start - 1``, ..., reading the key's stream from its value number ``taken`` (how many the
    swaps before took). Return how many values the swaps have taken in all.

    ``shuffle(items, key, top)`` is ``continue_shuffle(items, key, len(items) - 1, 0, top)``,
    and a shuffle made in parts, each going on where the one before stopped, makes the same
    swaps as one made at once: a draw pile settles its order as it is drawn (``Game._pile``).
    """
    if steps <= 0:
        return taken
    first = taken // 4  # the block of the stream that holds value number ``taken``
    blocks = (taken + steps + 3) // 4 - first  # one u64 per swap, four per block
    counters = (_COUNTERS[first:first + blocks] if first + blocks <= len(_COUNTERS)
                else [n.to_bytes(8, "big") for n in range(first, first + blocks)])
    stream = b"".join([_sha256(key + counter).digest() for counter in counters])
    values = list(_BLOCKS_U64[blocks].unpack(stream) if blocks < len(_BLOCKS_U64)
                  else struct.unpack(f">{4 * blocks}Q", stream))
    del values[:taken % 4]
    last = start - steps  # the swaps are those of i = start down to last + 1
    # A value randbelow could reject starts with seven 0xff bytes: when no such run is in the
    # stream at all (a cheap search of the bytes), none of the values is rejected.
    if start < _NEVER_REJECTED_BELOW_N and (_SEVEN_FF not in stream
                                           or max(values[:steps], default=0) < _NEVER_REJECTED):
        # The usual case by far: randbelow rejects none of these values, so each swap takes the
        # next one as it comes (values may hold a few more than the swaps take).
        i = start
        for value in values[:steps]:
            j = value % (i + 1)
            items[i], items[j] = items[j], items[i]
            i -= 1
        return taken + steps
    used = 0
    for i in range(start, last, -1):
        bound = i + 1
        limit = _TWO_64 - (_TWO_64 % bound)
        while True:
            if used == len(values):  # only after a rejection: extremely rare
                values.extend(
                    _FOUR_U64.unpack(
                        _sha256(key + (first + blocks).to_bytes(8, "big")).digest()
                    )
                )
                blocks += 1
            value = values[used]
            used += 1
            if value < limit:
                break
        j = value % bound
        items[i], items[j] = items[j], items[i]
    return taken + used
