import type { App } from '../context.js';

/** The admin API (DESIGN §8), behind ADMIN_TOKEN. */
export function registerAdminRoutes(_app: App): void {}
