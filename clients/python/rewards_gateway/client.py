"""A client of the merchant API: signing, clock-skew correction, safe retries, bulk splitting, jobs, pages."""

from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

from .reports import save_report
from .signing import check_test_vectors, sign_v1, signature_header_v2
from .splitting import MAX_BODY_BYTES, MAX_ITEMS, split_bulk, split_players
from .watching import JOB_EVENTS, JobEvent, StreamTransport, urllib_stream, watch_job
from .webhook_endpoint import WebhookEndpointMethods

READ_ALL = "/api/v1/integration/reward-configurations/readAll"
CANCEL = "/api/v1/integration/rewards/cancel"
BULK_CANCEL = "/api/v1/integration/rewards/bulkCancel"
BULK_CANCEL_BY_QUERY = "/api/v1/integration/rewards/bulkCancelByQuery"
JOB_STATUS = "/api/v1/integration/jobs/status"
JOB_REWARDS = "/api/v1/integration/jobs/rewards"
JOB_UNAPPLIED = "/api/v1/integration/jobs/unapplied"
JOB_ABORT = "/api/v1/integration/jobs/cancel"
JOB_REPORT = "/api/v1/integration/jobs/report"

FINISHED_STATES = frozenset({"completed", "failed", "cancelled"})

# docs/interface.md, "Errors".
RATE_LIMITED = 7
SERVICE_UNAVAILABLE = 11
CONFLICT = 13
TIMESTAMP_EXPIRED = 3


@dataclass(frozen=True)
class Response:
    status: int
    headers: Mapping[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class Transport(Protocol):
    def __call__(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes, timeout: float
    ) -> Response: ...


def urllib_transport(method: str, url: str, headers: Mapping[str, str], body: bytes, timeout: float) -> Response:
    request = urllib.request.Request(url, data=body, method=method, headers=dict(headers))
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return Response(answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read())
    except urllib.error.HTTPError as error:  # a 4xx/5xx still carries headers and an error body
        return Response(error.code, {k.lower(): v for k, v in error.headers.items()}, error.read())


class ApiError(Exception):
    """An answer the client does not retry (or no longer retries): the HTTP status and the service's errorCode."""

    def __init__(self, status: int, error_code: int | None, message: str, response: Response | None = None):
        super().__init__(f"HTTP {status} errorCode {error_code}: {message}")
        self.status = status
        self.error_code = error_code
        self.error_message = message
        self.response = response


class JobTimeoutError(TimeoutError):
    """A job did not finish within the time given to wait_for_job."""


@dataclass(frozen=True)
class RetryEvent:
    attempt: int
    path: str
    status: int | None  # None: no answer (connection refused, reset, timeout)
    error_code: int | None
    delay: float


@dataclass
class BulkResult:
    job_ids: list[str]
    statuses: list[dict[str, Any]]

    def total(self, name: str) -> int:
        return sum(int((status.get("result") or {}).get(name, 0)) for status in self.statuses)


def _error_of(response: Response) -> tuple[int | None, str]:
    try:
        body = response.json()
    except ValueError:
        return None, response.body[:200].decode("utf-8", "replace")
    if isinstance(body, dict):
        return body.get("errorCode"), str(body.get("errorMessage", ""))
    return None, ""


def _retry_after_seconds(response: Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class RewardsClient(WebhookEndpointMethods):
    """One merchant's client. Construction checks the signing code against the test vectors.

    signature_version 2 adds X-Signature over the exact bytes sent. Every cancel carries an
    Idempotency-Key (the caller's or a fresh one), so a cancel is retried after any failure that may have
    left it unstored; reads are retried likewise; nothing else is. max_delay is the longest wait accepted: an
    answer whose Retry-After is longer is raised as ApiError rather than waited for.
    """

    def __init__(
        self,
        base_url: str,
        merchant_id: str,
        secret: str,
        *,
        signature_version: int = 1,
        timeout: float = 30.0,
        max_attempts: int = 8,
        max_delay: float = 30.0,
        transport: Transport = urllib_transport,
        stream_transport: StreamTransport = urllib_stream,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        on_retry: Callable[[RetryEvent], None] | None = None,
        test_vectors: str | None = None,
    ):
        if signature_version not in (1, 2):
            raise ValueError("signature_version is 1 or 2")
        check_test_vectors(test_vectors)
        self.base_url = base_url.rstrip("/")
        self.merchant_id = merchant_id
        self._secret = secret
        self.signature_version = signature_version
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.max_delay = max_delay
        self._transport = transport
        self._stream_transport = stream_transport
        self._sleep = sleep
        self._clock = clock
        self._on_retry = on_retry
        self.clock_skew_ms = 0

    # -- time -----------------------------------------------------------------------------------------

    def now_ms(self) -> int:
        """The service's time as this client estimates it (local clock plus the measured skew)."""
        return int(self._clock() * 1000) + self.clock_skew_ms

    def _learn_skew(self, response: Response, sent_ms: int, received_ms: int, force: bool) -> None:
        date = response.headers.get("date")
        if not date:
            return
        try:
            server_ms = int(parsedate_to_datetime(date).timestamp() * 1000)
        except (TypeError, ValueError):
            return
        # Date has a one-second resolution: the server's time was in [server_ms, server_ms + 1000).
        skew = server_ms + 500 - (sent_ms + received_ms) // 2
        if force or abs(skew) > 2_000:
            self.clock_skew_ms = skew

    # -- one signed request, retried when that is safe ------------------------------------------------

    def request(
        self,
        path: str,
        fields: Mapping[str, Any] | None = None,
        *,
        idempotency_key: str | None = None,
        retry_unknown_outcome: bool = True,
        representation: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        """POSTs `fields` signed afresh on every attempt; answers the first 2xx, raises ApiError otherwise.

        retry_unknown_outcome: retry when the outcome is unknown (no answer, a 500). True for reads and for
        requests with an Idempotency-Key; False for an abort, whose repeat would answer "already finished".
        representation: send `Prefer: return=representation`, so that a cancel answers its job id as JSON
        too (without it, the service answers the interface's empty 200 with the id in X-Job-Id only).
        """
        skew_corrected = False
        for attempt in range(1, self.max_attempts + 1):
            timestamp = self.now_ms()
            body_fields = {
                "merchantId": self.merchant_id,
                "timestamp": timestamp,
                "hash": sign_v1(self.merchant_id, self._secret, timestamp),
                **(fields or {}),
            }
            body = json.dumps(body_fields, separators=(",", ":")).encode("utf-8")
            sent_headers = {"content-type": "application/json", **(headers or {})}
            if idempotency_key is not None:
                sent_headers["Idempotency-Key"] = idempotency_key
            if representation:
                sent_headers["Prefer"] = "return=representation"
            if self.signature_version == 2:
                sent_headers["X-Signature"] = signature_header_v2(self._secret, timestamp, "POST", path, body)
            sent_ms = int(self._clock() * 1000)
            try:
                response = self._transport("POST", self.base_url + path, sent_headers, body, self.timeout)
            except OSError:  # refused, reset, timed out: the request may or may not have been applied
                if not retry_unknown_outcome or attempt == self.max_attempts:
                    raise
                self._wait(RetryEvent(attempt, path, None, None, self._backoff(attempt, None)))
                continue
            received_ms = int(self._clock() * 1000)
            if 200 <= response.status < 300:
                self._learn_skew(response, sent_ms, received_ms, force=False)
                return response
            error_code, message = _error_of(response)
            if (
                response.status == 401
                and error_code == TIMESTAMP_EXPIRED
                and not skew_corrected
                and attempt < self.max_attempts
            ):
                # Our clock is off: take the service's from its Date header and sign again, once.
                self._learn_skew(response, sent_ms, received_ms, force=True)
                skew_corrected = True
                continue
            retry_after = _retry_after_seconds(response)
            if (
                attempt < self.max_attempts
                and self._retryable(response, error_code, retry_unknown_outcome)
                and (retry_after is None or retry_after <= self.max_delay)
            ):
                delay = self._backoff(attempt, retry_after)
                self._wait(RetryEvent(attempt, path, response.status, error_code, delay))
                continue
            raise ApiError(response.status, error_code, message, response)
        raise AssertionError("unreachable")

    @staticmethod
    def _retryable(response: Response, error_code: int | None, unknown_outcome_ok: bool) -> bool:
        if response.status == 429 or response.status == 503:
            return True  # nothing was stored (a 429 or 503 leaves an Idempotency-Key free)
        if response.status == 409 and error_code == CONFLICT:
            # "still being stored" and "not yet all listed" invite a retry with Retry-After; a 409 without
            # it (aborting a finished job) is final.
            return "retry-after" in response.headers
        if response.status >= 500:
            return unknown_outcome_ok
        return False

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            # Never sooner than the service asked, plus up to a second of jitter so that many clients do
            # not come back at the same instant.
            return retry_after + random.uniform(0, min(1.0, 0.25 * retry_after + 0.1))
        # Full jitter on an exponential base.
        return random.uniform(0, min(self.max_delay, 0.25 * 2 ** (attempt - 1)))

    def _wait(self, event: RetryEvent) -> None:
        if self._on_retry is not None:
            self._on_retry(event)
        self._sleep(event.delay)

    # -- routes ---------------------------------------------------------------------------------------

    def read_all(self, **filters: Any) -> list[dict[str, Any]]:
        """One readAll answer (filters: name, status, rewardType, limit, offset)."""
        result: list[dict[str, Any]] = self.request(READ_ALL, filters).json()
        return result

    def iter_read_all(self, page_size: int = 1_000, **filters: Any) -> Iterator[dict[str, Any]]:
        """Every configuration, reading offset pages of `page_size` until a short page."""
        offset = 0
        while True:
            page = self.read_all(**filters, limit=page_size, offset=offset)
            yield from page
            if len(page) < page_size:
                return
            offset += len(page)

    @staticmethod
    def _job_id(response: Response) -> str:
        # The JSON body the cancels ask for (Prefer: return=representation); else X-Job-Id, the
        # interface's answer, should a proxy have dropped the Prefer header.
        body = response.json()
        if isinstance(body, dict) and isinstance(body.get("jobId"), str):
            return body["jobId"]
        job_id = response.headers.get("x-job-id")
        if job_id:
            return job_id
        raise ApiError(response.status, None, "the answer carries no job id", response)

    def cancel(
        self, *, id: str | None = None, external_id: str | None = None, idempotency_key: str | None = None
    ) -> str:
        """Cancels one reward; answers the job id."""
        if (id is None) == (external_id is None):
            raise ValueError("exactly one of id and external_id")
        fields = {"id": id} if id is not None else {"externalId": external_id}
        key = idempotency_key or str(uuid.uuid4())
        return self._job_id(self.request(CANCEL, fields, idempotency_key=key, representation=True))

    def bulk_cancel(
        self, *, ids: Iterable[str] = (), external_ids: Iterable[str] = (), idempotency_key: str | None = None
    ) -> str:
        """One bulkCancel request (within the limits); answers the job id. bulk_cancel_all splits."""
        fields: dict[str, Any] = {}
        id_list, external_list = list(ids), list(external_ids)
        if id_list:
            fields["ids"] = id_list
        if external_list:
            fields["externalIds"] = external_list
        key = idempotency_key or str(uuid.uuid4())
        return self._job_id(self.request(BULK_CANCEL, fields, idempotency_key=key, representation=True))

    def bulk_cancel_by_query(
        self,
        player_ids: Iterable[str],
        *,
        reward_configuration_id: str | None = None,
        external_reward_configuration_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> str:
        fields: dict[str, Any] = {"playerIds": list(player_ids)}
        if reward_configuration_id is not None:
            fields["rewardConfigurationId"] = reward_configuration_id
        if external_reward_configuration_id is not None:
            fields["externalRewardConfigurationId"] = external_reward_configuration_id
        key = idempotency_key or str(uuid.uuid4())
        return self._job_id(self.request(BULK_CANCEL_BY_QUERY, fields, idempotency_key=key, representation=True))

    def bulk_cancel_all(
        self,
        *,
        ids: Iterable[str] = (),
        external_ids: Iterable[str] = (),
        idempotency_key: str | None = None,
        max_items: int = MAX_ITEMS,
        max_body_bytes: int = MAX_BODY_BYTES,
        max_queued_jobs: int = 100,
        wait: bool = True,
        poll_interval: float = 0.5,
        job_timeout: float = 600.0,
    ) -> BulkResult:
        """Cancels any number of rewards: requests within the count and byte limits, never more than
        `max_queued_jobs` of them unfinished at once (the merchant's queued-job quota; a 429 is retried
        too). Request n carries the Idempotency-Key "<key>-<n>", so running the same call again with the same
        key queues nothing twice. With wait, answers once every job has finished, with their statuses.
        """
        chunks = split_bulk(ids, external_ids, max_items=max_items, max_body_bytes=max_body_bytes)
        base_key = idempotency_key or str(uuid.uuid4())
        job_ids: list[str] = []
        statuses: dict[str, dict[str, Any]] = {}
        unfinished: list[str] = []
        for index, chunk in enumerate(chunks):
            while len(unfinished) >= max_queued_jobs:
                oldest = unfinished.pop(0)
                statuses[oldest] = self.wait_for_job(oldest, poll_interval=poll_interval, timeout=job_timeout)
            job_id = self.bulk_cancel(
                ids=chunk.ids, external_ids=chunk.external_ids, idempotency_key=f"{base_key}-{index}"
            )
            job_ids.append(job_id)
            unfinished.append(job_id)
        if wait:
            for job_id in unfinished:
                statuses[job_id] = self.wait_for_job(job_id, poll_interval=poll_interval, timeout=job_timeout)
        return BulkResult(job_ids, [statuses[job_id] for job_id in job_ids if job_id in statuses])

    def bulk_cancel_by_query_all(
        self, player_ids: Iterable[str], *, idempotency_key: str | None = None, **options: Any
    ) -> list[str]:
        """bulkCancelByQuery for any number of players: one request per chunk; answers the job ids."""
        base_key = idempotency_key or str(uuid.uuid4())
        return [
            self.bulk_cancel_by_query(chunk, idempotency_key=f"{base_key}-{index}", **options)
            for index, chunk in enumerate(split_players(player_ids))
        ]

    def job_status(self, job_id: str) -> dict[str, Any]:
        status: dict[str, Any] = self.request(JOB_STATUS, {"jobId": job_id}).json()
        return status

    def wait_for_job(self, job_id: str, *, poll_interval: float = 0.5, timeout: float = 600.0) -> dict[str, Any]:
        """Polls jobs/status until the job is completed, failed or cancelled."""
        deadline = self._clock() + timeout
        while True:
            status = self.job_status(job_id)
            if status.get("state") in FINISHED_STATES:
                return status
            if self._clock() >= deadline:
                raise JobTimeoutError(f"job {job_id} still {status.get('state')} after {timeout} s")
            self._sleep(poll_interval)

    def iter_job_rewards(self, job_id: str, *, page_size: int = 1_000) -> Iterator[dict[str, Any]]:
        """Every reward the job cancelled, following the `next` cursor (a 409 "not yet listed" is waited out)."""
        after: str | None = None
        while True:
            fields: dict[str, Any] = {"jobId": job_id, "limit": page_size}
            if after is not None:
                fields["after"] = after
            page = self.request(JOB_REWARDS, fields).json()
            yield from page["rewards"]
            after = page.get("next")
            if after is None:
                return

    def iter_job_unapplied(self, job_id: str, *, page_size: int = 1_000) -> Iterator[dict[str, Any]]:
        """Every identifier a bulkCancel did not cancel, with its outcome (notFound, notCancellable, alreadyCancelled)."""
        after: dict[str, str] | None = None
        while True:
            fields: dict[str, Any] = {"jobId": job_id, "limit": page_size}
            if after is not None:
                fields["after"] = after
            page = self.request(JOB_UNAPPLIED, fields).json()
            yield from page["identifiers"]
            after = page.get("next")
            if after is None:
                return

    def download_report(self, job_id: str, path: str, *, gzip: bool = True) -> dict[str, Any]:
        """Saves a finished bulk job's report to `path` after checking its sha256; answers its summary.

        The report is NDJSON: one line per requested identifier with its outcome, then a summary line. A job
        still running is waited out (409 with Retry-After, up to max_delay). gzip asks for a compressed
        transfer; the file holds the decoded NDJSON either way. The body is held in memory while checked.
        """
        encoding = "gzip" if gzip else "identity"
        response = self.request(JOB_REPORT, {"jobId": job_id}, headers={"Accept-Encoding": encoding})
        return save_report(response, path)

    def abort_job(self, job_id: str) -> dict[str, Any]:
        """Stops a job; a finished one is ApiError 409 errorCode 13."""
        status: dict[str, Any] = self.request(JOB_ABORT, {"jobId": job_id}, retry_unknown_outcome=False).json()
        return status

    def watch(self, job_id: str) -> Iterator[JobEvent]:
        """The job's events as they happen (GET jobs/events): `progress` at most once a second, then the final
        event (completed, failed, cancelled), after which the generator ends. Reconnects by itself."""

        def signed_query() -> tuple[dict[str, str], dict[str, str]]:
            timestamp = self.now_ms()
            fields = {
                "merchantId": self.merchant_id,
                "timestamp": str(timestamp),
                "hash": sign_v1(self.merchant_id, self._secret, timestamp),
            }
            headers: dict[str, str] = {}
            if self.signature_version == 2:
                path = f"{JOB_EVENTS}?{urllib.parse.urlencode({**fields, 'jobId': job_id})}"
                headers["X-Signature"] = signature_header_v2(self._secret, timestamp, "GET", path, b"")
            return fields, headers

        def refused(status: int, body: bytes, headers: Mapping[str, str]) -> ApiError:
            error_code, message = _error_of(Response(status, headers, body))
            return ApiError(status, error_code, message)

        return watch_job(
            base_url=self.base_url,
            job_id=job_id,
            signed_query=signed_query,
            transport=self._stream_transport,
            sleep=self._sleep,
            max_attempts=self.max_attempts,
            refused=refused,
        )
