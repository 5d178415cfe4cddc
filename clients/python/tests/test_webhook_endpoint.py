import unittest

from rewards_gateway import ApiError, RewardsClient
from rewards_gateway.webhook_endpoint import WEBHOOKS

from .fakes import MERCHANT_ID, SECRET, FakeClock, ScriptedTransport, answer, error


def client(transport: ScriptedTransport) -> RewardsClient:
    clock = FakeClock()
    return RewardsClient("http://gateway.test", MERCHANT_ID, SECRET, transport=transport, sleep=clock.sleep, clock=clock.time)


class TestWebhookEndpoint(unittest.TestCase):
    def test_get_answers_none_when_no_endpoint_is_set(self):
        transport = ScriptedTransport([error(404, 10)])
        self.assertIsNone(client(transport).get_webhook())
        self.assertEqual(transport.sent[0].url, "http://gateway.test" + WEBHOOKS + "get")

    def test_put_sends_the_url_and_events_signed(self):
        transport = ScriptedTransport([answer(200, {"url": "https://m.example/h", "events": ["job.failed"], "secret": "whsec_x"})])
        created = client(transport).put_webhook("https://m.example/h", ["job.failed"])
        self.assertEqual(created["secret"], "whsec_x")
        fields = transport.sent[0].fields
        self.assertEqual((fields["url"], fields["events"], fields["merchantId"]), ("https://m.example/h", ["job.failed"], MERCHANT_ID))
        self.assertIn("hash", fields)

    def test_a_rotation_or_a_send_is_not_repeated_after_a_500(self):
        for call in (
            lambda c: c.rotate_webhook_secret(),
            lambda c: c.redeliver_webhook_event("msg_x"),
            lambda c: c.send_webhook_test_event(),
            lambda c: c.recover_webhook_events(0),
        ):
            transport = ScriptedTransport([error(500, 99), answer(200, {})])
            with self.assertRaises(ApiError):
                call(client(transport))
            self.assertEqual(len(transport.sent), 1)

    def test_deliveries_follow_the_cursor_with_the_filters(self):
        transport = ScriptedTransport(
            [
                answer(200, {"deliveries": [{"eventId": "msg_1"}], "next": "c1"}),
                answer(200, {"deliveries": [{"eventId": "msg_2"}], "next": None}),
            ]
        )
        listed = list(client(transport).iter_webhook_deliveries(status="failed", job_id="j", page_size=1))
        self.assertEqual([entry["eventId"] for entry in listed], ["msg_1", "msg_2"])
        first, second = (sent.fields for sent in transport.sent)
        self.assertEqual((first["status"], first["jobId"], first["limit"]), ("failed", "j", 1))
        self.assertNotIn("after", first)
        self.assertEqual(second["after"], "c1")


if __name__ == "__main__":
    unittest.main()
