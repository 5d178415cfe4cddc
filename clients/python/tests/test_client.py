import hashlib
import hmac
import unittest

from rewards_gateway import ApiError, RetryEvent, RewardsClient, sign_v1
from rewards_gateway.client import BULK_CANCEL, CANCEL, JOB_REWARDS, JOB_STATUS, READ_ALL

from .fakes import MERCHANT_ID, SECRET, FakeClock, ScriptedTransport, answer, error, job_answer


def client(transport: ScriptedTransport, clock: FakeClock, **options) -> RewardsClient:
    return RewardsClient(
        "http://gateway.test", MERCHANT_ID, SECRET, transport=transport, sleep=clock.sleep, clock=clock.time, **options
    )


def status(job_id: str, state: str = "completed", **result) -> dict:
    return {"jobId": job_id, "state": state, "result": result or None}


class TestSigning(unittest.TestCase):
    def test_v1_signs_the_timestamp_of_the_body(self):
        clock = FakeClock()
        transport = ScriptedTransport([answer(200, [])])
        client(transport, clock).read_all(status="ACTIVE")
        fields = transport.sent[0].fields
        self.assertEqual(fields["timestamp"], int(clock.now * 1000))
        self.assertEqual(fields["hash"], sign_v1(MERCHANT_ID, SECRET, fields["timestamp"]))
        self.assertEqual(fields["status"], "ACTIVE")
        self.assertNotIn("X-Signature", transport.sent[0].headers)

    def test_v2_signs_the_exact_bytes_sent(self):
        clock = FakeClock()
        transport = ScriptedTransport([job_answer("job-1")])
        client(transport, clock, signature_version=2).cancel(external_id="r-1")
        sent = transport.sent[0]
        t = sent.fields["timestamp"]
        message = f"{t}.POST.{CANCEL}.".encode() + sent.body
        digest = hmac.new(SECRET.encode(), message, hashlib.sha256).hexdigest()
        self.assertEqual(sent.headers["X-Signature"], f"t={t},v1={digest}")


class TestRetries(unittest.TestCase):
    def test_a_429_is_retried_after_retry_after_with_jitter_and_the_same_idempotency_key(self):
        clock = FakeClock()
        events: list[RetryEvent] = []
        transport = ScriptedTransport([error(429, 7, {"Retry-After": "2"}), job_answer("job-1")])
        job_id = client(transport, clock, on_retry=events.append).cancel(external_id="r-1")
        self.assertEqual(job_id, "job-1")
        self.assertEqual(len(transport.sent), 2)
        keys = {sent.headers["Idempotency-Key"] for sent in transport.sent}
        self.assertEqual(len(keys), 1)
        self.assertEqual(len(clock.sleeps), 1)
        self.assertGreaterEqual(clock.sleeps[0], 2)
        self.assertLessEqual(clock.sleeps[0], 2 * 1.25 + 0.1)
        self.assertEqual((events[0].status, events[0].error_code), (429, 7))
        # Each attempt signs afresh.
        self.assertNotEqual(transport.sent[0].fields["timestamp"], transport.sent[1].fields["timestamp"])

    def test_every_cancel_carries_an_idempotency_key_and_a_given_one_is_kept(self):
        clock = FakeClock()
        transport = ScriptedTransport([job_answer("a"), job_answer("b"), job_answer("c")])
        gateway = client(transport, clock)
        gateway.cancel(id="00000000-0000-4000-8000-000000000009")
        gateway.bulk_cancel(external_ids=["x"])
        gateway.cancel(external_id="y", idempotency_key="refund-4711")
        keys = [sent.headers.get("Idempotency-Key") for sent in transport.sent]
        self.assertTrue(all(keys))
        self.assertEqual(keys[2], "refund-4711")
        self.assertNotEqual(keys[0], keys[1])

    def test_a_503_and_a_lost_connection_are_retried_for_a_cancel(self):
        clock = FakeClock()
        transport = ScriptedTransport(
            [error(503, 11, {"Retry-After": "1"}), ConnectionRefusedError(), error(500, 99), job_answer("job-1")]
        )
        self.assertEqual(client(transport, clock).cancel(external_id="r-1"), "job-1")
        self.assertEqual(len(transport.sent), 4)

    def test_a_409_with_retry_after_is_retried_and_one_without_is_final(self):
        clock = FakeClock()
        transport = ScriptedTransport([error(409, 13, {"Retry-After": "1"}), job_answer("job-1")])
        self.assertEqual(client(transport, clock).cancel(external_id="r-1"), "job-1")

        transport = ScriptedTransport([error(409, 13)])
        with self.assertRaises(ApiError) as raised:
            client(transport, clock).abort_job("job-1")
        self.assertEqual((raised.exception.status, raised.exception.error_code), (409, 13))
        self.assertEqual(len(transport.sent), 1)

    def test_client_errors_are_not_retried(self):
        for status_code, code in ((400, 1), (401, 2), (403, 4), (404, 10), (413, 5), (422, 12)):
            with self.subTest(status=status_code):
                clock = FakeClock()
                transport = ScriptedTransport([error(status_code, code)])
                with self.assertRaises(ApiError) as raised:
                    client(transport, clock).cancel(external_id="r-1")
                self.assertEqual(raised.exception.error_code, code)
                self.assertEqual(len(transport.sent), 1)
                self.assertEqual(clock.sleeps, [])

    def test_an_abort_whose_outcome_is_unknown_is_not_repeated(self):
        clock = FakeClock()
        transport = ScriptedTransport([ConnectionResetError()])
        with self.assertRaises(ConnectionResetError):
            client(transport, clock).abort_job("job-1")
        transport = ScriptedTransport([error(500, 99)])
        with self.assertRaises(ApiError):
            client(transport, clock).abort_job("job-1")
        self.assertEqual(len(transport.sent), 1)

    def test_gives_up_after_max_attempts(self):
        clock = FakeClock()
        transport = ScriptedTransport([error(503, 11, {"Retry-After": "1"}) for _ in range(3)])
        with self.assertRaises(ApiError) as raised:
            client(transport, clock, max_attempts=3).read_all()
        self.assertEqual(raised.exception.status, 503)
        self.assertEqual(len(transport.sent), 3)

    def test_a_retry_after_longer_than_max_delay_is_raised_not_waited(self):
        clock = FakeClock()
        transport = ScriptedTransport([error(429, 7, {"Retry-After": "60"})])
        with self.assertRaises(ApiError) as raised:
            client(transport, clock, max_delay=30).cancel(external_id="r-1")
        self.assertEqual(raised.exception.status, 429)
        self.assertEqual(clock.sleeps, [])

    def test_a_timestamp_expired_on_the_last_attempt_is_raised(self):
        clock = FakeClock()
        transport = ScriptedTransport([error(401, 3, date=clock.now + 3_600)])
        with self.assertRaises(ApiError) as raised:
            client(transport, clock, max_attempts=1).read_all()
        self.assertEqual(raised.exception.error_code, 3)

    def test_backoff_without_retry_after_stays_under_max_delay(self):
        clock = FakeClock()
        transport = ScriptedTransport([ConnectionRefusedError() for _ in range(7)] + [answer(200, [])])
        client(transport, clock, max_delay=1.0).read_all()
        self.assertTrue(all(0 <= delay <= 1.0 for delay in clock.sleeps))


class TestClockSkew(unittest.TestCase):
    def test_a_timestamp_expired_answer_takes_the_service_time_from_date_and_signs_again_once(self):
        clock = FakeClock()
        server_time = clock.now + 3_600  # the service is an hour ahead
        transport = ScriptedTransport([error(401, 3, date=server_time), answer(200, [], date=server_time)])
        gateway = client(transport, clock)
        self.assertEqual(gateway.read_all(), [])
        second = transport.sent[1].fields["timestamp"]
        self.assertLess(abs(second - server_time * 1000), 1_500)
        self.assertEqual(transport.sent[1].fields["hash"], sign_v1(MERCHANT_ID, SECRET, second))
        # Later requests keep the correction.
        transport.answers.append(answer(200, []))
        gateway.read_all()
        self.assertLess(abs(transport.sent[2].fields["timestamp"] - server_time * 1000), 1_500)

    def test_a_second_timestamp_expired_is_final(self):
        clock = FakeClock()
        transport = ScriptedTransport([error(401, 3, date=clock.now + 3_600), error(401, 3, date=clock.now + 3_600)])
        with self.assertRaises(ApiError) as raised:
            client(transport, clock).read_all()
        self.assertEqual(raised.exception.error_code, 3)
        self.assertEqual(len(transport.sent), 2)

    def test_a_large_skew_seen_on_a_success_is_learnt_and_a_small_one_ignored(self):
        clock = FakeClock()
        transport = ScriptedTransport([answer(200, [], date=clock.now + 0.4), answer(200, [], date=clock.now - 120)])
        gateway = client(transport, clock)
        gateway.read_all()
        self.assertEqual(gateway.clock_skew_ms, 0)
        gateway.read_all()
        self.assertLess(abs(gateway.clock_skew_ms + 120_000), 1_000)


class TestJobs(unittest.TestCase):
    def test_every_cancel_asks_for_the_representation_and_answers_the_job_id_of_its_body(self):
        clock = FakeClock()
        transport = ScriptedTransport([answer(200, {"jobId": f"from-body-{n}"}) for n in range(3)] + [answer(200, [])])
        gateway = client(transport, clock)
        self.assertEqual(gateway.cancel(external_id="r"), "from-body-0")
        self.assertEqual(gateway.bulk_cancel(external_ids=["x"]), "from-body-1")
        self.assertEqual(gateway.bulk_cancel_by_query(["p"]), "from-body-2")
        gateway.read_all()
        prefers = [sent.headers.get("Prefer") for sent in transport.sent]
        self.assertEqual(prefers, ["return=representation"] * 3 + [None])

    def test_the_job_id_falls_back_to_x_job_id_of_the_interfaces_empty_answer(self):
        clock = FakeClock()
        transport = ScriptedTransport([answer(200, None, {"X-Job-Id": "from-header"})])
        self.assertEqual(client(transport, clock).cancel(external_id="r"), "from-header")

    def test_an_answer_without_a_job_id_is_an_error(self):
        clock = FakeClock()
        transport = ScriptedTransport([answer(200)])
        with self.assertRaises(ApiError):
            client(transport, clock).cancel(external_id="r")

    def test_wait_for_job_polls_until_finished(self):
        clock = FakeClock()
        transport = ScriptedTransport(
            [answer(200, status("j", "queued")), answer(200, status("j", "running")), answer(200, status("j", "completed", cancelled=3))]
        )
        final = client(transport, clock).wait_for_job("j", poll_interval=0.25)
        self.assertEqual(final["result"], {"cancelled": 3})
        self.assertEqual(clock.sleeps, [0.25, 0.25])
        self.assertTrue(all(sent.url.endswith(JOB_STATUS) for sent in transport.sent))

    def test_wait_for_job_gives_up_at_its_deadline(self):
        clock = FakeClock()
        transport = ScriptedTransport([answer(200, status("j", "running")) for _ in range(5)])
        with self.assertRaises(TimeoutError):
            client(transport, clock).wait_for_job("j", poll_interval=1, timeout=3)

    def test_bulk_cancel_all_keeps_within_the_queued_job_quota(self):
        clock = FakeClock()
        transport = ScriptedTransport(
            [
                job_answer("j0"),
                job_answer("j1"),
                answer(200, status("j0", cancelled=4)),  # the quota (2) is full: the oldest is waited for
                job_answer("j2"),
                answer(200, status("j1", cancelled=4)),
                answer(200, status("j2", cancelled=2)),
            ]
        )
        result = client(transport, clock).bulk_cancel_all(
            external_ids=[f"r{i:02d}" for i in range(10)], max_items=4, max_queued_jobs=2, idempotency_key="batch-7"
        )
        self.assertEqual(result.job_ids, ["j0", "j1", "j2"])
        self.assertEqual(result.total("cancelled"), 10)
        cancels = [sent for sent in transport.sent if sent.url.endswith(BULK_CANCEL)]
        self.assertEqual([sent.headers["Idempotency-Key"] for sent in cancels], ["batch-7-0", "batch-7-1", "batch-7-2"])
        self.assertEqual([len(sent.fields["externalIds"]) for sent in cancels], [4, 4, 2])
        self.assertEqual([sent.url.rsplit("/", 1)[1] for sent in transport.sent], ["bulkCancel", "bulkCancel", "status", "bulkCancel", "status", "status"])


class TestPages(unittest.TestCase):
    def test_job_rewards_follow_the_cursor_and_wait_out_a_409(self):
        clock = FakeClock()
        transport = ScriptedTransport(
            [
                error(409, 13, {"Retry-After": "1"}),
                answer(200, {"rewards": [{"id": "a"}, {"id": "b"}], "next": "b"}),
                answer(200, {"rewards": [{"id": "c"}], "next": None}),
            ]
        )
        rewards = list(client(transport, clock).iter_job_rewards("j", page_size=2))
        self.assertEqual([reward["id"] for reward in rewards], ["a", "b", "c"])
        self.assertTrue(all(sent.url.endswith(JOB_REWARDS) for sent in transport.sent))
        self.assertNotIn("after", transport.sent[1].fields)
        self.assertEqual(transport.sent[2].fields["after"], "b")

    def test_read_all_pages_by_offset_until_a_short_page(self):
        clock = FakeClock()
        transport = ScriptedTransport([answer(200, [{"id": 1}, {"id": 2}]), answer(200, [{"id": 3}, {"id": 4}]), answer(200, [])])
        items = list(client(transport, clock).iter_read_all(page_size=2, status="ACTIVE"))
        self.assertEqual([item["id"] for item in items], [1, 2, 3, 4])
        self.assertEqual([sent.fields["offset"] for sent in transport.sent], [0, 2, 4])
        self.assertTrue(all(sent.fields["limit"] == 2 and sent.url.endswith(READ_ALL) for sent in transport.sent))


if __name__ == "__main__":
    unittest.main()
