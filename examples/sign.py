#!/usr/bin/env python3
"""Signs and sends two merchant requests (readAll, then cancel) with the Python standard library only.

    python3 examples/sign.py [--base-url http://localhost:3000] [--merchant-id ID] [--secret KEY]
                             [--external-id demo-reward-1]

Without flags it is the demo merchant that `npm start` / `npm run seed` loads. The signature is
HMAC-SHA256, keyed with the merchant's secret, of merchantId followed by timestamp (epoch
milliseconds, decimal digits, no separator), as lower-case hex. It covers nothing else: not the body,
the path or the method (see docs/interface.md, "Signing").
"""

import argparse
import hashlib
import hmac
import json
import sys
import time
import urllib.error
import urllib.request

DEMO_MERCHANT_ID = "00000000-0000-4000-8000-000000000001"
DEMO_SECRET = "demo-secret-key-change-me"

# The test vector of docs/interface.md: if this fails, the signing below is wrong.
VECTOR = (DEMO_MERCHANT_ID, DEMO_SECRET, 1763679600000,
          "3ccacfc209e852fb256c6572b2ea27b169d22dd9f1eb5c3a1dd6b446cef5bc78")


def sign(merchant_id: str, secret: str, timestamp: int) -> str:
    message = f"{merchant_id}{timestamp}".encode("utf-8")
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def signed_body(merchant_id: str, secret: str, **fields) -> bytes:
    timestamp = int(time.time() * 1000)
    body = {"merchantId": merchant_id, "timestamp": timestamp,
            "hash": sign(merchant_id, secret, timestamp), **fields}
    return json.dumps(body).encode("utf-8")


def post(url: str, body: bytes):
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:  # 4xx/5xx still carry the error body
        return error.code, error.headers, error.read().decode("utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default="http://localhost:3000")
    parser.add_argument("--merchant-id", default=DEMO_MERCHANT_ID)
    parser.add_argument("--secret", default=DEMO_SECRET)
    parser.add_argument("--external-id", default="demo-reward-1")
    args = parser.parse_args()

    merchant_id, secret, timestamp, expected = VECTOR
    if sign(merchant_id, secret, timestamp) != expected:
        print("signature test vector: MISMATCH", file=sys.stderr)
        return 1
    print("signature test vector: ok")

    base = args.base_url.rstrip("/")
    status, _, text = post(f"{base}/api/v1/integration/reward-configurations/readAll",
                           signed_body(args.merchant_id, args.secret))
    print(f"readAll: HTTP {status}")
    print(text)

    status, headers, text = post(f"{base}/api/v1/integration/rewards/cancel",
                                 signed_body(args.merchant_id, args.secret, externalId=args.external_id))
    print(f"cancel: HTTP {status} X-Job-Id: {headers.get('x-job-id') or '-'}")
    if text:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
