import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, signWebhook } from '../../src/shared/webhooks/webhook-signature.js';

describe('webhook secrets and signatures (checked with the standardwebhooks package)', () => {
  it('a secret is whsec_ + base64 of 32 random bytes, new every time', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(secret);
  });

  it("our signature is the reference implementation's, and it verifies", () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({ type: 'job.completed', timestamp: new Date().toISOString(), data: { jobId: 'j' } });
    const now = new Date();
    const seconds = Math.floor(now.getTime() / 1000);
    const signature = signWebhook(secret, 'msg_1', seconds, body);
    const reference = new Webhook(secret);
    expect(signature).toBe(reference.sign('msg_1', now, body));
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(seconds), 'webhook-signature': signature };
    expect(reference.verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => reference.verify(`${body} `, headers)).toThrow();
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
  });
});
