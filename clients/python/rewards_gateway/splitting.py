"""Splitting a bulk cancel of any size into requests within the service's count and byte limits."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

# docs/interface.md, "Limits": BULK_MAX_ITEMS and BODY_LIMIT_BYTES (bulkCancel, bulkCancelByQuery).
MAX_ITEMS = 10_000
MAX_BODY_BYTES = 2 * 1024 * 1024

# What the signing fields take at most: a 36-character merchant id, a 16-digit timestamp, a 64-digit hash,
# plus room for the keys and the fixed fields a caller adds (idempotency lives in a header).
_ENVELOPE_BYTES = 512


@dataclass
class BulkChunk:
    ids: list[str] = field(default_factory=list)
    external_ids: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids) + len(self.external_ids)


def _entry_bytes(value: str) -> int:
    return len(json.dumps(value)) + 1  # the comma


def _distinct_sorted(values: Iterable[str]) -> list[str]:
    # Sorted, so that the same set always gives the same requests (and the same idempotency fingerprints).
    return sorted(set(values))


def split_bulk(
    ids: Iterable[str] = (),
    external_ids: Iterable[str] = (),
    *,
    max_items: int = MAX_ITEMS,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> list[BulkChunk]:
    """Chunks of at most `max_items` identifiers whose JSON body stays under `max_body_bytes`."""
    if max_items < 1 or max_body_bytes <= _ENVELOPE_BYTES:
        raise ValueError("limits too small")
    budget = max_body_bytes - _ENVELOPE_BYTES
    chunks: list[BulkChunk] = []
    current = BulkChunk()
    used = 0
    for kind, values in (("ids", _distinct_sorted(ids)), ("external_ids", _distinct_sorted(external_ids))):
        for value in values:
            size = _entry_bytes(value)
            if size > budget:
                raise ValueError("an identifier is larger than a whole request")
            if len(current) >= max_items or used + size > budget:
                chunks.append(current)
                current = BulkChunk()
                used = 0
            getattr(current, kind).append(value)
            used += size
    if len(current) > 0:
        chunks.append(current)
    return chunks


def split_players(
    player_ids: Iterable[str], *, max_items: int = MAX_ITEMS, max_body_bytes: int = MAX_BODY_BYTES
) -> list[list[str]]:
    """bulkCancelByQuery: player ids in chunks within the same limits."""
    return [chunk.external_ids for chunk in split_bulk((), player_ids, max_items=max_items, max_body_bytes=max_body_bytes)]
