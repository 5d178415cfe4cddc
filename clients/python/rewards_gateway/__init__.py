"""Python client of the merchant rewards gateway (standard library only)."""

from .client import (
    ApiError,
    BulkResult,
    JobTimeoutError,
    Response,
    RetryEvent,
    RewardsClient,
    urllib_transport,
)
from .signing import SigningSelfCheckError, check_test_vectors, sign_v1, signature_header_v2
from .splitting import MAX_BODY_BYTES, MAX_ITEMS, BulkChunk, split_bulk, split_players
from .watching import JobEvent, StreamAnswer, urllib_stream
from .webhooks import WebhookVerificationError, verify_webhook

__all__ = [
    "ApiError",
    "BulkChunk",
    "BulkResult",
    "JobEvent",
    "JobTimeoutError",
    "MAX_BODY_BYTES",
    "MAX_ITEMS",
    "Response",
    "RetryEvent",
    "RewardsClient",
    "SigningSelfCheckError",
    "StreamAnswer",
    "WebhookVerificationError",
    "check_test_vectors",
    "sign_v1",
    "signature_header_v2",
    "split_bulk",
    "split_players",
    "urllib_stream",
    "urllib_transport",
    "verify_webhook",
]
