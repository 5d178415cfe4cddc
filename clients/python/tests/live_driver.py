"""Runs the client against a running service for test/integration/python-client.*.test.ts.

    python3 tests/live_driver.py <scenario>   (options as one JSON object on stdin)

Prints each retry on stderr as it happens ("retry <status> <errorCode>", flushed, so that a test can act on
it) and the scenario's outcome as one JSON line on stdout.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rewards_gateway import ApiError, RetryEvent, RewardsClient, verify_webhook  # noqa: E402
from rewards_gateway.webhooks import WebhookVerificationError  # noqa: E402

retries: list[dict[str, Any]] = []


def record_retry(event: RetryEvent) -> None:
    retries.append({"status": event.status, "errorCode": event.error_code, "delay": event.delay, "path": event.path})
    print(f"retry {event.status} {event.error_code}", file=sys.stderr, flush=True)


def make_client(options: dict[str, Any]) -> RewardsClient:
    return RewardsClient(
        options["baseUrl"],
        options["merchantId"],
        options["secret"],
        signature_version=options.get("signatureVersion", 1),
        max_attempts=options.get("maxAttempts", 30),
        max_delay=options.get("maxDelay", 10.0),
        timeout=10.0,
        on_retry=record_retry,
        # A local clock that is off by clockOffsetMs (to check that the client corrects it).
        clock=lambda: time.time() + options.get("clockOffsetMs", 0) / 1000,
    )


def basics(options: dict[str, Any]) -> dict[str, Any]:
    client = make_client(options)
    configurations = [configuration["id"] for configuration in client.iter_read_all(page_size=1)]
    job_id = client.cancel(external_id=options["externalId"])
    status = client.wait_for_job(job_id, poll_interval=0.1, timeout=60)
    rewards = list(client.iter_job_rewards(job_id))
    return {
        "configurations": configurations,
        "jobId": job_id,
        "status": status,
        "rewards": rewards,
        "clockSkewMs": client.clock_skew_ms,
    }


def bulk(options: dict[str, Any]) -> dict[str, Any]:
    client = make_client(options)
    result = client.bulk_cancel_all(
        external_ids=options["externalIds"],
        max_items=options.get("maxItems", 10_000),
        max_queued_jobs=options.get("maxQueuedJobs", 100),
        poll_interval=0.1,
    )
    listed = sum(1 for job_id in result.job_ids for _ in client.iter_job_rewards(job_id, page_size=5_000))
    # Page size 2: the cursor is followed across pages.
    unapplied = [entry for job_id in result.job_ids for entry in client.iter_job_unapplied(job_id, page_size=2)]
    totals = {
        name: result.total(name) for name in ("requested", "cancelled", "alreadyCancelled", "notCancellable", "notFound")
    }
    return {
        "jobIds": result.job_ids,
        "states": [status["state"] for status in result.statuses],
        "totals": totals,
        "listed": listed,
        "unapplied": unapplied,
    }


def cancels(options: dict[str, Any]) -> dict[str, Any]:
    client = make_client(options)
    job_ids = [client.cancel(external_id=external_id) for external_id in options["externalIds"]]
    statuses = [client.wait_for_job(job_id, poll_interval=0.1, timeout=60) for job_id in job_ids]
    return {"jobIds": job_ids, "states": [status["state"] for status in statuses]}


def verify(options: dict[str, Any]) -> dict[str, Any]:
    outcomes: list[Any] = []
    for webhook in options["webhooks"]:
        try:
            event = verify_webhook(webhook["headers"], webhook["body"].encode("utf-8"), options["secrets"])
            outcomes.append({"type": event["type"], "jobId": event["data"]["jobId"]})
        except WebhookVerificationError as error:
            outcomes.append({"refused": str(error)})
    return {"outcomes": outcomes}


def watch(options: dict[str, Any]) -> dict[str, Any]:
    client = make_client(options)
    job_id = client.bulk_cancel(external_ids=options["externalIds"])
    events = [{"type": event.type, "id": event.id, "status": event.status} for event in client.watch(job_id)]
    return {"jobId": job_id, "events": events}



def report(options: dict[str, Any]) -> dict[str, Any]:
    client = make_client(options)
    job_id = client.bulk_cancel(external_ids=options["externalIds"])
    status = client.wait_for_job(job_id, poll_interval=0.1, timeout=60)
    saved: dict[str, Any] = {}
    for use_gzip in (True, False):
        path = os.path.join(options["directory"], f"report-{use_gzip}.ndjson")
        summary = client.download_report(job_id, path, gzip=use_gzip)
        with open(path, encoding="utf-8") as file:
            saved["gzip" if use_gzip else "plain"] = {"summary": summary, "text": file.read()}
    return {"jobId": job_id, "status": status, "saved": saved}



def webhook_setup(options: dict[str, Any]) -> dict[str, Any]:
    client = make_client(options)
    before = client.get_webhook()
    first = client.put_webhook(options["url"])["secret"]
    rotated = client.rotate_webhook_secret()
    event_id = client.send_webhook_test_event()
    return {
        "before": before,
        "endpoint": client.get_webhook(),
        "secrets": [first, rotated["secret"]],
        "eventId": event_id,
    }


def webhook_log(options: dict[str, Any]) -> dict[str, Any]:
    client = make_client(options)
    deliveries = list(client.iter_webhook_deliveries(page_size=1))
    redelivered = client.redeliver_webhook_event(options["eventId"])
    recovery = client.recover_webhook_events(options["since"])
    return {"deliveries": deliveries, "redelivered": redelivered, "recovery": recovery, "removed": client.delete_webhook()}


SCENARIOS = {
    "basics": basics,
    "bulk": bulk,
    "cancels": cancels,
    "report": report,
    "verify": verify,
    "watch": watch,
    "webhook_setup": webhook_setup,
    "webhook_log": webhook_log,
}


def main() -> int:
    options = json.load(sys.stdin)
    try:
        outcome = SCENARIOS[sys.argv[1]](options)
    except ApiError as error:
        outcome = {"error": {"status": error.status, "errorCode": error.error_code}}
    print(json.dumps({**outcome, "retries": retries}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
