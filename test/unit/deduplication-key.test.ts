import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deduplicationKey } from '../../src/shared/jobs/job-catalogue.js';

const merchantA = randomUUID();
const merchantB = randomUUID();
const [id1, id2, id3] = [randomUUID(), randomUUID(), randomUUID()];

describe('deduplicationKey', () => {
  it('is the same for the same identifiers in any order', () => {
    expect(deduplicationKey(merchantA, 'bulkCancel', { ids: [id1, id2, id3], externalIds: ['x', 'y'] })).toBe(
      deduplicationKey(merchantA, 'bulkCancel', { externalIds: ['y', 'x'], ids: [id3, id1, id2] }),
    );
  });

  it('collapses duplicates, as the request does', () => {
    expect(deduplicationKey(merchantA, 'bulkCancel', { ids: [id1, id2, id1], externalIds: [] })).toBe(
      deduplicationKey(merchantA, 'bulkCancel', { ids: [id2, id1], externalIds: [] }),
    );
  });

  it('keeps its format: jobs waiting across a deploy are still found by the next version', () => {
    // Written by the version before the hash took each list in one update; any change to the input
    // format (order, separators, length prefixes) changes these.
    expect(deduplicationKey('m-1', 'bulkCancel', { ids: ['b', 'a', 'c', 'a'], externalIds: ['x'] })).toBe(
      'bulkCancel-c6076f3ad1eb604d08f2dfd80db91de19577ebcfe6304218a4263d6cb7703f0e',
    );
    expect(deduplicationKey('m-1', 'bulkCancel', { ids: ['a', 'b', 'c'], externalIds: ['x'] })).toBe(
      'bulkCancel-c6076f3ad1eb604d08f2dfd80db91de19577ebcfe6304218a4263d6cb7703f0e',
    );
    expect(deduplicationKey('m-1', 'cancel', { id: 'r' })).toBe(
      'cancel-7fe2ae5b7acf6cedce559c06ded321a48afd2c40c24219bbbe89c42aa99e7cba',
    );
  });

  it('treats a sorted list with a repeat like the list without it', () => {
    expect(deduplicationKey(merchantA, 'bulkCancel', { ids: ['a', 'a', 'b'] })).toBe(
      deduplicationKey(merchantA, 'bulkCancel', { ids: ['a', 'b'] }),
    );
  });

  it('differs between operations', () => {
    const keys = new Set([
      deduplicationKey(merchantA, 'cancel', { id: id1 }),
      deduplicationKey(merchantA, 'bulkCancel', { id: id1 }),
      deduplicationKey(merchantA, 'bulkCancelByQuery', { id: id1 }),
    ]);
    expect(keys.size).toBe(3);
  });

  it('differs between merchants', () => {
    expect(deduplicationKey(merchantA, 'cancel', { id: id1 })).not.toBe(
      deduplicationKey(merchantB, 'cancel', { id: id1 }),
    );
  });

  it('differs for different identifier sets', () => {
    expect(deduplicationKey(merchantA, 'bulkCancel', { ids: [id1, id2] })).not.toBe(
      deduplicationKey(merchantA, 'bulkCancel', { ids: [id1, id3] }),
    );
    expect(deduplicationKey(merchantA, 'bulkCancel', { ids: [id1, id2] })).not.toBe(
      deduplicationKey(merchantA, 'bulkCancel', { ids: [id1] }),
    );
  });

  it('tells apart the same value given as an id and as an external id', () => {
    expect(deduplicationKey(merchantA, 'cancel', { id: id1 })).not.toBe(
      deduplicationKey(merchantA, 'cancel', { externalId: id1 }),
    );
    expect(deduplicationKey(merchantA, 'bulkCancel', { ids: [id1], externalIds: [] })).not.toBe(
      deduplicationKey(merchantA, 'bulkCancel', { ids: [], externalIds: [id1] }),
    );
  });

  it('takes the query filter into account', () => {
    const players = { playerIds: ['p1', 'p2'] };
    const plain = deduplicationKey(merchantA, 'bulkCancelByQuery', players);
    const withConfig = deduplicationKey(merchantA, 'bulkCancelByQuery', { ...players, rewardConfigurationId: id1 });
    const withExternal = deduplicationKey(merchantA, 'bulkCancelByQuery', {
      ...players,
      externalRewardConfigurationId: id1,
    });
    expect(new Set([plain, withConfig, withExternal]).size).toBe(3);
    // An absent filter is no filter.
    expect(deduplicationKey(merchantA, 'bulkCancelByQuery', { ...players, rewardConfigurationId: undefined })).toBe(
      plain,
    );
  });

  it('does not merge neighbouring identifiers: ["ab"] is not ["a", "b"]', () => {
    expect(deduplicationKey(merchantA, 'bulkCancel', { externalIds: ['ab'] })).not.toBe(
      deduplicationKey(merchantA, 'bulkCancel', { externalIds: ['a', 'b'] }),
    );
    expect(deduplicationKey(merchantA, 'bulkCancel', { externalIds: ['a b'] })).not.toBe(
      deduplicationKey(merchantA, 'bulkCancel', { externalIds: ['a', 'b'] }),
    );
  });

  it('is usable as a BullMQ id: no ":"', () => {
    expect(deduplicationKey(merchantA, 'bulkCancel', { ids: [id1], externalIds: ['a:b'] })).not.toContain(':');
  });
});
