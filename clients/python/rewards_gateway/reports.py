"""Job reports: verify a report's checksum and save it to a file."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the client imports this module
    from .client import Response


class ReportError(Exception):
    """A report that did not arrive whole (no summary line) or whose checksum does not hold."""


def verify_report(body: bytes) -> dict[str, Any]:
    """Answers the summary of a decoded report after checking that its sha256 covers every byte before it.

    The summary is the last line, `{"summary": {...}}`; its sha256 is the hex SHA-256 of all the bytes
    before that line.
    """
    if not body.endswith(b"\n"):
        raise ReportError("the report ended without its summary line: it is incomplete")
    cut = body.rfind(b"\n", 0, len(body) - 1) + 1
    try:
        summary = json.loads(body[cut:])["summary"]
    except (ValueError, KeyError, TypeError) as error:
        raise ReportError("the report ended without its summary line: it is incomplete") from error
    if hashlib.sha256(body[:cut]).hexdigest() != summary.get("sha256"):
        raise ReportError("the report does not match its sha256: download it again")
    verified: dict[str, Any] = summary
    return verified


def save_report(response: Response, path: str) -> dict[str, Any]:
    """Decodes (gzip) and verifies a report answer, then writes it to `path` (through `path.partial`)."""
    body = response.body
    if response.headers.get("content-encoding", "").lower() == "gzip":
        body = gzip.decompress(body)
    summary = verify_report(body)
    partial = f"{path}.partial"
    with open(partial, "wb") as file:
        file.write(body)
    os.replace(partial, path)
    return summary
