import type { Config } from '../../shared/config/config.js';

/**
 * Why the seed must not run here, or null when it may. The demo merchant's secret is public (the
 * README and the examples print it): seeded into a production database, anyone could sign as it. So
 * with NODE_ENV=production the seed runs only where SEED_ALLOWED_IN_PRODUCTION says the deployment is
 * a demo on purpose.
 */
export function seedRefusal(config: Pick<Config, 'NODE_ENV' | 'SEED_ALLOWED_IN_PRODUCTION'>): string | null {
  if (config.NODE_ENV !== 'production' || config.SEED_ALLOWED_IN_PRODUCTION) return null;
  return (
    "seed: refused with NODE_ENV=production, because the demo merchant's secret is public; " +
    'set SEED_ALLOWED_IN_PRODUCTION=true only for a demo environment.'
  );
}
