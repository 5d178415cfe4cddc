"""The merchant's own webhook through the signed merchant API: endpoint, secret, delivery log, sends again."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

WEBHOOKS = "/api/v1/integration/webhooks/"
NOT_FOUND = 10


class _Requests(Protocol):
    def request(
        self,
        path: str,
        fields: Mapping[str, Any] | None = None,
        *,
        idempotency_key: str | None = None,
        retry_unknown_outcome: bool = True,
    ) -> Any: ...


class WebhookEndpointMethods:
    """Mixed into RewardsClient. A rotation or a send is not repeated when its outcome is unknown (no answer,
    a 500): repeating it would rotate twice or send the event twice."""

    def get_webhook(self: _Requests) -> dict[str, Any] | None:
        """Your endpoint (never its secret), or None when none is set."""
        from .client import ApiError

        try:
            endpoint: dict[str, Any] = self.request(WEBHOOKS + "get").json()
        except ApiError as error:
            if error.status == 404 and error.error_code == NOT_FOUND:
                return None
            raise
        return endpoint

    def put_webhook(self: _Requests, url: str, events: Sequence[str] | None = None) -> dict[str, Any]:
        """Sets your endpoint with a new secret: `secret` in the answer is shown only here."""
        fields: dict[str, Any] = {"url": url}
        if events is not None:
            fields["events"] = list(events)
        answer: dict[str, Any] = self.request(WEBHOOKS + "put", fields).json()
        return answer

    def delete_webhook(self: _Requests) -> bool:
        """Removes your endpoint; False when there was none."""
        return bool(self.request(WEBHOOKS + "delete").json()["removed"])

    def rotate_webhook_secret(self: _Requests) -> dict[str, Any]:
        """A new secret (shown once); the previous one signs beside it until previousSecretExpiresAt (24 h)."""
        answer: dict[str, Any] = self.request(WEBHOOKS + "rotateSecret", retry_unknown_outcome=False).json()
        return answer

    def iter_webhook_deliveries(
        self: _Requests,
        *,
        status: str | None = None,
        type: str | None = None,  # noqa: A002 - the field's name on the wire
        job_id: str | None = None,
        page_size: int = 100,
    ) -> Iterator[dict[str, Any]]:
        """Your delivery log, newest first, following the `next` cursor; each delivery with its attempts."""
        filters: dict[str, Any] = {"limit": page_size}
        for name, value in (("status", status), ("type", type), ("jobId", job_id)):
            if value is not None:
                filters[name] = value
        after: str | None = None
        while True:
            page = self.request(WEBHOOKS + "deliveries", {**filters, **({"after": after} if after else {})}).json()
            yield from page["deliveries"]
            after = page.get("next")
            if after is None:
                return

    def redeliver_webhook_event(self: _Requests, event_id: str) -> str:
        """Sends one event again (one attempt, the same webhook-id); answers its webhook-id."""
        answer = self.request(WEBHOOKS + "redeliver", {"eventId": event_id}, retry_unknown_outcome=False).json()
        return str(answer["eventId"])

    def recover_webhook_events(self: _Requests, since_ms: int) -> dict[str, Any]:
        """Sends again every event since `since_ms` (epoch ms) that was not delivered; `events` says how many."""
        answer: dict[str, Any] = self.request(
            WEBHOOKS + "recover", {"since": since_ms}, retry_unknown_outcome=False
        ).json()
        return answer

    def send_webhook_test_event(self: _Requests) -> str:
        """Sends a webhook.test event to your endpoint; answers its webhook-id."""
        return str(self.request(WEBHOOKS + "test", retry_unknown_outcome=False).json()["eventId"])
