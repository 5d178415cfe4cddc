"""Request signing (v1 and v2), checked against the project's test vectors before anything is signed."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from pathlib import Path
from typing import Any

_DIGITS = re.compile(r"[0-9]{1,16}")

# The repository's fixture (docs/signing-test-vectors.json) when the package runs from a checkout; the copy
# shipped inside the package otherwise (a unit test keeps the two identical).
_REPOSITORY_VECTORS = Path(__file__).resolve().parents[3] / "docs" / "signing-test-vectors.json"
_PACKAGED_VECTORS = Path(__file__).resolve().parent / "signing_test_vectors.json"


class SigningSelfCheckError(RuntimeError):
    """The signing code disagrees with the test vectors: nothing must be signed with it."""


def timestamp_digits(timestamp: int | str) -> str:
    """The decimal digits that are signed; refuses what the service refuses (floats, exponents, fractions)."""
    if isinstance(timestamp, bool):
        raise ValueError("timestamp must be an integer or a string of decimal digits")
    if isinstance(timestamp, int):
        digits = str(timestamp)
    elif isinstance(timestamp, str):
        digits = timestamp
    else:
        raise ValueError("timestamp must be an integer or a string of decimal digits")
    if not _DIGITS.fullmatch(digits):
        raise ValueError("timestamp must be an integer or a string of decimal digits")
    return digits


def sign_v1(merchant_id: str, secret: str, timestamp: int | str) -> str:
    """hash: lower-case hex HMAC-SHA256 of merchantId followed by the timestamp's digits."""
    message = f"{merchant_id}{timestamp_digits(timestamp)}".encode("utf-8")
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def signature_header_v2(secret: str, t: int, method: str, path_with_query: str, body: bytes) -> str:
    """X-Signature over the very bytes sent: t "." METHOD "." path with query "." raw body."""
    message = f"{timestamp_digits(t)}.{method.upper()}.{path_with_query}.".encode("utf-8") + body
    digest = hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()
    return f"t={t},v1={digest}"


def load_test_vectors(path: str | Path | None = None) -> dict[str, Any]:
    chosen = Path(path) if path is not None else (
        _REPOSITORY_VECTORS if _REPOSITORY_VECTORS.is_file() else _PACKAGED_VECTORS
    )
    with open(chosen, encoding="utf-8") as file:
        loaded: dict[str, Any] = json.load(file)
    return loaded


def check_test_vectors(path: str | Path | None = None) -> int:
    """Signs every vector and compares; raises SigningSelfCheckError on the first difference.

    Returns how many vectors were checked (never 0: an empty file is a failure too).
    """
    vectors = load_test_vectors(path)
    checked = 0
    for vector in vectors.get("v1", []):
        got = sign_v1(vector["merchantId"], vector["secret"], vector["timestamp"])
        if got != vector["hash"]:
            raise SigningSelfCheckError(f"v1 vector {vector['name']!r}: got {got}, expected {vector['hash']}")
        checked += 1
    for vector in vectors.get("v1Refused", []):
        try:
            sign_v1(vector["merchantId"], vector["secret"], vector["timestamp"])
        except ValueError:
            checked += 1
            continue
        raise SigningSelfCheckError(f"v1 vector {vector['name']!r} was signed but the service refuses it")
    for vector in vectors.get("v2", []):
        got = signature_header_v2(
            vector["secret"], vector["t"], vector["method"], vector["pathWithQuery"], vector["body"].encode("utf-8")
        )
        if got != vector["xSignature"]:
            raise SigningSelfCheckError(f"v2 vector {vector['name']!r}: got {got}, expected {vector['xSignature']}")
        checked += 1
    if checked == 0:
        raise SigningSelfCheckError("no test vectors found")
    return checked
