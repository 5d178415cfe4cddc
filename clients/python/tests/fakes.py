"""A scripted transport and a fake clock, so that the client's decisions are tested without a network."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any

from rewards_gateway import Response

MERCHANT_ID = "00000000-0000-4000-8000-000000000001"
SECRET = "demo-secret-key-change-me"


@dataclass
class Sent:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes

    @property
    def fields(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.body)
        return loaded


class FakeClock:
    def __init__(self, start: float = 1_763_679_600.0):
        self.now = start
        self.sleeps: list[float] = []

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


Answer = Response | OSError | Callable[[Sent], Response]


@dataclass
class ScriptedTransport:
    """Answers the requests in order from `answers`; records what was sent."""

    answers: list[Answer]
    sent: list[Sent] = field(default_factory=list)

    def __call__(self, method: str, url: str, headers: Mapping[str, str], body: bytes, timeout: float) -> Response:
        request = Sent(method, url, dict(headers), body)
        self.sent.append(request)
        if not self.answers:
            raise AssertionError(f"unexpected request {url}")
        answer = self.answers.pop(0)
        if isinstance(answer, OSError):
            raise answer
        if callable(answer) and not isinstance(answer, Response):
            return answer(request)
        return answer


def answer(status: int, body: Any = None, headers: Mapping[str, str] | None = None, date: float | None = None) -> Response:
    all_headers = {k.lower(): v for k, v in (headers or {}).items()}
    if date is not None:
        all_headers["date"] = formatdate(date, usegmt=True)
    raw = b"" if body is None else json.dumps(body).encode("utf-8")
    return Response(status, all_headers, raw)


def error(status: int, code: int, headers: Mapping[str, str] | None = None, date: float | None = None) -> Response:
    return answer(status, {"errorCode": code, "errorMessage": "x"}, headers, date)


def job_answer(job_id: str) -> Response:
    """A cancel's 200 as the service answers one that asks for the representation (the client does)."""
    return answer(200, {"jobId": job_id}, {"X-Job-Id": job_id})
