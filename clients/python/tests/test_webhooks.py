import base64
import hashlib
import hmac
import json
import unittest

from rewards_gateway import WebhookVerificationError, verify_webhook

OLD_SECRET = "whsec_" + base64.b64encode(b"old-secret-bytes-0123456789abcdef").decode()
NEW_SECRET = "whsec_" + base64.b64encode(b"new-secret-bytes-0123456789abcdef").decode()
NOW = 1_763_679_605
BODY = json.dumps({"type": "job.completed", "data": {"jobId": "j"}}).encode()


def signed(secret: str, body: bytes = BODY, webhook_id: str = "msg_1", timestamp: int = NOW) -> dict[str, str]:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{webhook_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return {
        "Webhook-Id": webhook_id,
        "Webhook-Timestamp": str(timestamp),
        "Webhook-Signature": "v1," + base64.b64encode(digest).decode(),
    }


class TestVerifyWebhook(unittest.TestCase):
    def test_either_of_two_secrets_verifies(self):
        for secret in (OLD_SECRET, NEW_SECRET):
            with self.subTest(secret=secret):
                event = verify_webhook(signed(secret), BODY, [OLD_SECRET, NEW_SECRET], now=NOW)
                self.assertEqual(event["type"], "job.completed")

    def test_a_body_given_as_text_verifies_too(self):
        self.assertEqual(verify_webhook(signed(NEW_SECRET), BODY.decode(), NEW_SECRET, now=NOW)["data"], {"jobId": "j"})

    def test_another_secret_is_refused(self):
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(signed(OLD_SECRET), BODY, [NEW_SECRET], now=NOW)

    def test_a_changed_body_id_or_timestamp_is_refused(self):
        headers = signed(NEW_SECRET)
        cases = [
            (headers, BODY + b" "),
            ({**headers, "Webhook-Id": "msg_2"}, BODY),
            ({**headers, "Webhook-Timestamp": str(NOW + 1)}, BODY),
        ]
        for given, body in cases:
            with self.subTest(given=given), self.assertRaises(WebhookVerificationError):
                verify_webhook(given, body, [OLD_SECRET, NEW_SECRET], now=NOW)

    def test_one_matching_entry_among_several_is_enough(self):
        headers = signed(NEW_SECRET)
        headers["Webhook-Signature"] = "v1,AAAA v2,zzz " + headers["Webhook-Signature"]
        self.assertEqual(verify_webhook(headers, BODY, NEW_SECRET, now=NOW)["type"], "job.completed")

    def test_outside_five_minutes_is_refused_either_way(self):
        for now in (NOW + 301, NOW - 301):
            with self.subTest(now=now), self.assertRaises(WebhookVerificationError):
                verify_webhook(signed(NEW_SECRET), BODY, NEW_SECRET, now=now)
        self.assertTrue(verify_webhook(signed(NEW_SECRET), BODY, NEW_SECRET, now=NOW + 300))

    def test_missing_headers_are_refused(self):
        for name in ("Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"):
            headers = signed(NEW_SECRET)
            del headers[name]
            with self.subTest(name=name), self.assertRaises(WebhookVerificationError):
                verify_webhook(headers, BODY, NEW_SECRET, now=NOW)

    def test_no_secret_or_a_malformed_one_is_a_programming_error(self):
        with self.assertRaises(ValueError):
            verify_webhook(signed(NEW_SECRET), BODY, [], now=NOW)
        with self.assertRaises(ValueError):
            verify_webhook(signed(NEW_SECRET), BODY, "whsec_not base64!", now=NOW)


if __name__ == "__main__":
    unittest.main()
