#!/usr/bin/env python3
"""Signs and sends two merchant requests (readAll, then cancel) with the Python standard library only.

    python3 examples/sign.py [--base-url http://localhost:3000] [--merchant-id ID] [--secret KEY]
                             [--external-id demo-reward-1] [--v2]

Without flags it is the demo merchant that `npm start` / `npm run seed` loads. The signature is
HMAC-SHA256, keyed with the merchant's secret, of merchantId followed by timestamp (epoch
milliseconds, decimal digits, no separator), as lower-case hex. It covers nothing else: not the body,
the path or the method (see docs/interface.md, "Signing").

--v2 (for a merchant on signature version 2) also sends the header
X-Signature: t=<epoch ms>,v1=<hex>, HMAC-SHA256 of "<t>.<METHOD>.<path with query>.<body bytes>":
it binds the signature to this very request (docs/interface.md, "Signature version 2").
"""

import argparse
import hashlib
import hmac
import json
import pathlib
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

DEMO_MERCHANT_ID = "00000000-0000-4000-8000-000000000001"
DEMO_SECRET = "demo-secret-key-change-me"

# The test vectors of docs/signing-test-vectors.json, which every example and client checks itself against:
# if one fails, the signing below is wrong.
VECTORS_PATH = pathlib.Path(__file__).resolve().parent.parent / "docs" / "signing-test-vectors.json"


def vectors_hold() -> bool:
    vectors = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
    return all(sign(v["merchantId"], v["secret"], v["timestamp"]) == v["hash"] for v in vectors["v1"]) and all(
        signature_header(v["secret"], v["t"], v["method"], v["pathWithQuery"], v["body"].encode("utf-8"))
        == v["xSignature"] for v in vectors["v2"])


def sign(merchant_id: str, secret: str, timestamp: int) -> str:
    message = f"{merchant_id}{timestamp}".encode("utf-8")
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def signature_header(secret: str, timestamp: int, method: str, path_with_query: str, body: bytes) -> str:
    """Version 2: the X-Signature value over exactly the bytes that are sent."""
    message = f"{timestamp}.{method}.{path_with_query}.".encode("utf-8") + body
    return f"t={timestamp},v1={hmac.new(secret.encode('utf-8'), message, hashlib.sha256).hexdigest()}"


def signed_body(merchant_id: str, secret: str, timestamp: int, **fields) -> bytes:
    body = {"merchantId": merchant_id, "timestamp": timestamp,
            "hash": sign(merchant_id, secret, timestamp), **fields}
    return json.dumps(body).encode("utf-8")


def post(url: str, body: bytes, secret: str, timestamp: int, v2: bool):
    headers = {"content-type": "application/json"}
    if v2:
        parts = urllib.parse.urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        headers["X-Signature"] = signature_header(secret, timestamp, "POST", path, body)
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
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
    parser.add_argument("--v2", action="store_true", help="also send X-Signature (signature version 2)")
    args = parser.parse_args()

    if not vectors_hold():
        print("signature test vector: MISMATCH", file=sys.stderr)
        return 1
    print("signature test vector: ok")

    base = args.base_url.rstrip("/")
    now = int(time.time() * 1000)
    status, _, text = post(f"{base}/api/v1/integration/reward-configurations/readAll",
                           signed_body(args.merchant_id, args.secret, now), args.secret, now, args.v2)
    print(f"readAll: HTTP {status}")
    print(text)

    now = int(time.time() * 1000)
    status, headers, text = post(f"{base}/api/v1/integration/rewards/cancel",
                                 signed_body(args.merchant_id, args.secret, now, externalId=args.external_id),
                                 args.secret, now, args.v2)
    print(f"cancel: HTTP {status} X-Job-Id: {headers.get('x-job-id') or '-'}")
    if text:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
