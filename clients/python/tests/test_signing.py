import json
import tempfile
import unittest
from pathlib import Path

from rewards_gateway import RewardsClient, SigningSelfCheckError, check_test_vectors, sign_v1, signature_header_v2
from rewards_gateway.signing import load_test_vectors

REPOSITORY_VECTORS = Path(__file__).resolve().parents[3] / "docs" / "signing-test-vectors.json"
PACKAGED_VECTORS = Path(__file__).resolve().parents[1] / "rewards_gateway" / "signing_test_vectors.json"


class TestVectors(unittest.TestCase):
    def test_every_vector_of_the_repository_file_is_checked(self):
        vectors = json.loads(REPOSITORY_VECTORS.read_text("utf-8"))
        expected = len(vectors["v1"]) + len(vectors["v1Refused"]) + len(vectors["v2"])
        self.assertEqual(check_test_vectors(REPOSITORY_VECTORS), expected)
        self.assertGreaterEqual(expected, 6)

    def test_the_packaged_copy_is_the_repository_file(self):
        self.assertEqual(PACKAGED_VECTORS.read_bytes(), REPOSITORY_VECTORS.read_bytes())

    def test_the_default_is_the_repository_file(self):
        self.assertEqual(load_test_vectors(), json.loads(REPOSITORY_VECTORS.read_text("utf-8")))

    def _altered(self, change) -> str:
        vectors = json.loads(REPOSITORY_VECTORS.read_text("utf-8"))
        change(vectors)
        handle = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump(vectors, handle)
        handle.close()
        self.addCleanup(Path(handle.name).unlink)
        return handle.name

    def test_a_wrong_v1_hash_stops_the_client(self):
        path = self._altered(lambda v: v["v1"][0].update(hash="0" * 64))
        with self.assertRaises(SigningSelfCheckError):
            check_test_vectors(path)
        with self.assertRaises(SigningSelfCheckError):
            RewardsClient("http://127.0.0.1:1", "m", "s", test_vectors=path)

    def test_a_wrong_v2_header_stops_the_client(self):
        path = self._altered(lambda v: v["v2"][1].update(body="x"))
        with self.assertRaises(SigningSelfCheckError):
            check_test_vectors(path)

    def test_a_refused_timestamp_that_would_be_signed_stops_the_client(self):
        path = self._altered(lambda v: v["v1Refused"][0].update(timestamp="1763679600000"))
        with self.assertRaises(SigningSelfCheckError):
            check_test_vectors(path)

    def test_an_empty_file_is_a_failure(self):
        path = self._altered(lambda v: [v.pop(key) for key in ("v1", "v1Refused", "v2")])
        with self.assertRaises(SigningSelfCheckError):
            check_test_vectors(path)


class TestTimestamps(unittest.TestCase):
    def test_integer_and_digit_string_sign_alike(self):
        self.assertEqual(sign_v1("m", "s", 1763679600000), sign_v1("m", "s", "1763679600000"))

    def test_floats_exponents_fractions_and_booleans_are_refused(self):
        for bad in (1763679600000.0, "1.7636796E12", "1763679600000.0", "", "-1", True, "12345678901234567"):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                sign_v1("m", "s", bad)  # type: ignore[arg-type]

    def test_v2_signs_the_method_in_upper_case_and_the_bytes_as_given(self):
        self.assertEqual(
            signature_header_v2("s", 1, "post", "/p", b"{}"), signature_header_v2("s", 1, "POST", "/p", b"{}")
        )
        self.assertNotEqual(
            signature_header_v2("s", 1, "POST", "/p", b'{"a":1}'), signature_header_v2("s", 1, "POST", "/p", b'{"a": 1}')
        )


if __name__ == "__main__":
    unittest.main()
