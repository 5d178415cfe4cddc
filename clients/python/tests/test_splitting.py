import json
import unittest

from rewards_gateway import MAX_BODY_BYTES, MAX_ITEMS, split_bulk, split_players

# The largest signing envelope the client sends around the lists.
ENVELOPE = {"merchantId": "00000000-0000-4000-8000-000000000001", "timestamp": 9999999999999999, "hash": "f" * 64}


def body_bytes(chunk) -> int:
    fields = dict(ENVELOPE)
    if chunk.ids:
        fields["ids"] = chunk.ids
    if chunk.external_ids:
        fields["externalIds"] = chunk.external_ids
    return len(json.dumps(fields, separators=(",", ":")).encode("utf-8"))


class TestSplitBulk(unittest.TestCase):
    def test_25000_short_ids_make_three_requests_of_at_most_10000(self):
        chunks = split_bulk(external_ids=[f"reward-{i}" for i in range(25_000)])
        self.assertEqual([len(chunk) for chunk in chunks], [10_000, 10_000, 5_000])
        self.assertEqual(sum(len(chunk.external_ids) for chunk in chunks), 25_000)

    def test_long_ids_are_split_by_bytes_within_2_mib(self):
        long_ids = [f"{i:010d}" + "x" * 245 for i in range(10_000)]  # 255 characters each
        chunks = split_bulk(external_ids=long_ids)
        self.assertGreater(len(chunks), 1)
        for chunk in chunks:
            self.assertLessEqual(body_bytes(chunk), MAX_BODY_BYTES)
            self.assertLessEqual(len(chunk), MAX_ITEMS)
        self.assertEqual(sorted(i for chunk in chunks for i in chunk.external_ids), sorted(long_ids))

    def test_escaped_characters_count_as_sent(self):
        quoted = [f'"\\{i}' + "\u00e9" * 250 for i in range(3_000)]  # escaped by json.dumps: ~6 bytes each
        for chunk in split_bulk(external_ids=quoted):
            self.assertLessEqual(body_bytes(chunk), MAX_BODY_BYTES)

    def test_ids_and_external_ids_share_the_count(self):
        chunks = split_bulk(ids=[f"{i:08d}-0000-4000-8000-000000000000" for i in range(6)], external_ids=["a", "b", "c"], max_items=4)
        self.assertEqual([len(chunk) for chunk in chunks], [4, 4, 1])
        self.assertEqual(chunks[1].ids, ["00000004-0000-4000-8000-000000000000", "00000005-0000-4000-8000-000000000000"])
        self.assertEqual(chunks[1].external_ids, ["a", "b"])

    def test_duplicates_collapse_and_order_does_not_change_the_requests(self):
        first = split_bulk(external_ids=["c", "a", "b", "a"], max_items=2)
        second = split_bulk(external_ids=["b", "c", "a"], max_items=2)
        self.assertEqual(first, second)
        self.assertEqual([chunk.external_ids for chunk in first], [["a", "b"], ["c"]])

    def test_nothing_to_cancel_is_no_request(self):
        self.assertEqual(split_bulk(), [])

    def test_players_are_split_alike(self):
        self.assertEqual([len(chunk) for chunk in split_players([f"p{i}" for i in range(20_001)])], [10_000, 10_000, 1])


if __name__ == "__main__":
    unittest.main()
