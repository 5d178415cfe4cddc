"""Following a job as a stream of events (GET /api/v1/integration/jobs/events, Server-Sent Events)."""

from __future__ import annotations

import json
import random
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

JOB_EVENTS = "/api/v1/integration/jobs/events"
FINAL_EVENTS = frozenset({"completed", "failed", "cancelled"})


@dataclass(frozen=True)
class JobEvent:
    """`progress` while the job runs, then one event named by its end state: completed, failed, cancelled."""

    type: str
    id: str  # sent back as Last-Event-ID when the client reconnects
    status: dict[str, Any]


@dataclass(frozen=True)
class StreamAnswer:
    status: int
    headers: Mapping[str, str]  # lower-case names
    lines: Iterable[bytes]  # the body line by line as it arrives; the whole error body for a non-2xx


class StreamTransport(Protocol):
    def __call__(
        self, url: str, headers: Mapping[str, str], timeout: float
    ) -> AbstractContextManager[StreamAnswer]: ...


class _UrllibStream(AbstractContextManager[StreamAnswer]):
    def __init__(self, url: str, headers: Mapping[str, str], timeout: float):
        self._request = urllib.request.Request(url, method="GET", headers=dict(headers))
        self._timeout = timeout
        self._answer: Any = None

    def __enter__(self) -> StreamAnswer:
        try:
            self._answer = urllib.request.urlopen(self._request, timeout=self._timeout)
        except urllib.error.HTTPError as error:  # a refusal still carries headers and an error body
            return StreamAnswer(error.code, {k.lower(): v for k, v in error.headers.items()}, [error.read()])
        headers = {k.lower(): v for k, v in self._answer.headers.items()}
        return StreamAnswer(self._answer.status, headers, self._answer)

    def __exit__(self, *exc: object) -> None:
        if self._answer is not None:
            self._answer.close()


def urllib_stream(url: str, headers: Mapping[str, str], timeout: float) -> AbstractContextManager[StreamAnswer]:
    return _UrllibStream(url, headers, timeout)


def parse_events(lines: Iterable[bytes]) -> Iterator[JobEvent]:
    """The events of a text/event-stream body, as the EventSource standard reads them (comments skipped)."""
    fields: dict[str, str] = {}
    for raw in lines:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if "data" in fields and "id" in fields:
                yield JobEvent(fields.get("event", "message"), fields["id"], json.loads(fields["data"]))
            fields = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        fields[name] = f"{fields[name]}\n{value}" if name == "data" and name in fields else value


def watch_job(
    *,
    base_url: str,
    job_id: str,
    signed_query: Callable[[], tuple[dict[str, str], dict[str, str]]],
    transport: StreamTransport,
    sleep: Callable[[float], None],
    max_attempts: int,
    refused: Callable[[int, bytes, Mapping[str, str]], Exception],
    read_timeout: float = 60.0,
) -> Iterator[JobEvent]:
    """Yields the job's events until the final one, reconnecting with Last-Event-ID after a dropped connection
    or a 429/503 (after Retry-After): the service then sends only a status not yet seen, and the final event
    at once when the job ended meanwhile. signed_query answers the query fields and the extra headers of one
    attempt (signed afresh). read_timeout must exceed the service's heartbeat (15 s)."""
    last_event_id: str | None = None
    failures = 0
    while True:
        fields, headers = signed_query()
        url = f"{base_url}{JOB_EVENTS}?{urllib.parse.urlencode({**fields, 'jobId': job_id})}"
        headers = {"accept": "text/event-stream", **headers}
        if last_event_id is not None:
            headers["last-event-id"] = last_event_id
        retry_after: float | None = None
        try:
            with transport(url, headers, read_timeout) as answer:
                if answer.status != 200:
                    body = b"".join(answer.lines)
                    value = answer.headers.get("retry-after", "")
                    retry_after = float(value) if value.strip().isdigit() else None
                    if answer.status not in (429, 503) and answer.status < 500:
                        raise refused(answer.status, body, answer.headers)
                    failures += 1
                    if failures >= max_attempts:
                        raise refused(answer.status, body, answer.headers)
                else:
                    for event in parse_events(answer.lines):
                        failures = 0
                        last_event_id = event.id
                        yield event
                        if event.type in FINAL_EVENTS:
                            return
        except OSError:  # refused, reset, timed out: reconnect from the last event seen
            failures += 1
            if failures >= max_attempts:
                raise
        base = retry_after if retry_after is not None else min(0.2 * 2 ** max(failures - 1, 0), 10.0)
        sleep(base + random.uniform(0, max(base / 4, 0.1)))
