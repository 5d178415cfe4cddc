import contextlib
import json
import unittest
import urllib.parse

from rewards_gateway import ApiError, RewardsClient, StreamAnswer, sign_v1

from .fakes import MERCHANT_ID, SECRET, FakeClock


def block(event: str, event_id: str, status: dict) -> list[bytes]:
    return [f"event: {event}\n".encode(), f"id: {event_id}\n".encode(), f"data: {json.dumps(status)}\n".encode(), b"\n"]


class ScriptedStreams:
    """Answers each connection from `answers` in order, records the URL and headers it was sent."""

    def __init__(self, answers: list[StreamAnswer | OSError]):
        self.answers = answers
        self.sent: list[tuple[str, dict[str, str]]] = []

    def __call__(self, url, headers, timeout):
        self.sent.append((url, dict(headers)))
        answer = self.answers.pop(0)
        if isinstance(answer, OSError):
            raise answer
        return contextlib.nullcontext(answer)


class WatchTest(unittest.TestCase):
    def client(self, streams: ScriptedStreams, clock: FakeClock) -> RewardsClient:
        return RewardsClient(
            "http://service", MERCHANT_ID, SECRET, stream_transport=streams, sleep=clock.sleep, clock=clock.time
        )

    def test_yields_progress_then_the_final_event_and_reconnects_with_last_event_id(self):
        running = {"jobId": "j", "state": "running", "progress": 40}
        completed = {"jobId": "j", "state": "completed", "progress": 100}
        streams = ScriptedStreams(
            [
                StreamAnswer(200, {}, [b": keep-alive\n", b"\n", *block("progress", "a1", running)]),
                ConnectionResetError("reset"),
                StreamAnswer(200, {}, block("completed", "b2", completed)),
            ]
        )
        clock = FakeClock()
        events = list(self.client(streams, clock).watch("j"))
        self.assertEqual([(e.type, e.id, e.status) for e in events], [("progress", "a1", running), ("completed", "b2", completed)])
        self.assertEqual([headers.get("last-event-id") for _, headers in streams.sent], [None, "a1", "a1"])
        for url, _ in streams.sent:
            parsed = urllib.parse.urlparse(url)
            self.assertEqual(parsed.path, "/api/v1/integration/jobs/events")
            query = dict(urllib.parse.parse_qsl(parsed.query))
            self.assertEqual(query["jobId"], "j")
            self.assertEqual(query["hash"], sign_v1(MERCHANT_ID, SECRET, query["timestamp"]))

    def test_waits_retry_after_on_a_429_and_raises_a_404(self):
        streams = ScriptedStreams(
            [
                StreamAnswer(429, {"retry-after": "3"}, [b'{"errorCode":7,"errorMessage":"Too many"}']),
                StreamAnswer(404, {}, [b'{"errorCode":10,"errorMessage":"Job not found"}']),
            ]
        )
        clock = FakeClock()
        with self.assertRaises(ApiError) as raised:
            list(self.client(streams, clock).watch("j"))
        self.assertEqual((raised.exception.status, raised.exception.error_code), (404, 10))
        self.assertGreaterEqual(clock.sleeps[0], 3)


if __name__ == "__main__":
    unittest.main()
