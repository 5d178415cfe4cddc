"""Verifying completion webhooks (Standard Webhooks headers), with one or several secrets."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

DEFAULT_TOLERANCE_SECONDS = 300


class WebhookVerificationError(Exception):
    """The request is not a webhook of the service signed with one of the given secrets, or is too old."""


def _secret_key(secret: str) -> bytes:
    encoded = secret[len("whsec_"):] if secret.startswith("whsec_") else secret
    try:
        return base64.b64decode(encoded, validate=True)
    except binascii.Error as error:
        raise ValueError("a webhook secret is whsec_ followed by base64") from error


def verify_webhook(
    headers: Mapping[str, str],
    body: bytes | str,
    secrets: str | Sequence[str],
    *,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> dict[str, Any]:
    """Checks the signature over the raw body as received and returns the parsed event.

    Several secrets: any one of them may have signed (the old and the new one around a change).
    """
    secret_list = [secrets] if isinstance(secrets, str) else list(secrets)
    if not secret_list:
        raise ValueError("at least one secret is needed")
    keys = [_secret_key(secret) for secret in secret_list]
    lowered = {name.lower(): value for name, value in headers.items()}
    webhook_id = lowered.get("webhook-id")
    timestamp = lowered.get("webhook-timestamp")
    signatures = lowered.get("webhook-signature")
    if not webhook_id or not timestamp or not signatures:
        raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature")
    if not timestamp.isdigit():
        raise WebhookVerificationError("webhook-timestamp is not epoch seconds")
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > tolerance_seconds:
        raise WebhookVerificationError("webhook-timestamp is outside the tolerance")
    raw = body.encode("utf-8") if isinstance(body, str) else body
    signed = f"{webhook_id}.{timestamp}.".encode("utf-8") + raw
    expected = [hmac.new(key, signed, hashlib.sha256).digest() for key in keys]
    for entry in signatures.split(" "):
        version, _, encoded = entry.partition(",")
        if version != "v1":
            continue
        try:
            given = base64.b64decode(encoded, validate=True)
        except binascii.Error:
            continue
        if any(hmac.compare_digest(given, digest) for digest in expected):
            event: dict[str, Any] = json.loads(raw)
            return event
    raise WebhookVerificationError("no signature matches the given secrets")
