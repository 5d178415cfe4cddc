import type { TestApi } from './api.js';

/** The admin token every test environment configures (environment.ts). */
export const ADMIN_AUTHORIZATION = { authorization: 'Bearer test-admin-token-0123456789abcdef0123' };

export interface PortalLink {
  /** As the admin API answered it (on PUBLIC_BASE_URL). */
  url: string;
  expiresAt: number;
  /** The same path and token on the test's own merchants' listener. */
  local: string;
}

/** Issues a portal link for `merchantId` through the admin API, as an operator would. */
export async function issuePortalLink(api: TestApi, merchantId: string): Promise<PortalLink> {
  const response = await api.post(`/admin/v1/merchants/${merchantId}/portal-links`, '', ADMIN_AUTHORIZATION);
  if (response.status !== 201) throw new Error(`portal link: ${response.status} ${await response.text()}`);
  const link = (await response.json()) as { url: string; expiresAt: number };
  const url = new URL(link.url);
  return { ...link, local: `${api.baseUrl}${url.pathname}${url.search}` };
}

export interface PortalClient {
  /** `portal_session=<token>`, as the browser would send it. */
  cookie: string;
  csrfToken: string;
  /** A request to the merchants' listener with the session cookie (and, for writes, the CSRF token). */
  request(path: string, options?: { method?: string; csrfToken?: string | null }): Promise<Response>;
}

/** Opens the link over HTTP and answers a client holding its session; throws when the link is refused. */
export async function openPortal(api: TestApi, link: PortalLink): Promise<PortalClient> {
  const entered = await fetch(link.local, { redirect: 'manual' });
  if (entered.status !== 200) throw new Error(`portal link refused: ${entered.status}`);
  const cookie = /portal_session=[^;]+/.exec(entered.headers.get('set-cookie') ?? '')?.[0];
  if (!cookie) throw new Error('no portal session cookie');
  return portalClient(api, cookie);
}

async function portalClient(api: TestApi, cookie: string): Promise<PortalClient> {
  const request = (path: string, options: { method?: string; csrfToken?: string | null } = {}) => {
    const method = options.method ?? 'GET';
    const headers: Record<string, string> = { cookie };
    const csrf = options.csrfToken === undefined ? client.csrfToken : options.csrfToken;
    if (method !== 'GET' && csrf !== null) headers['x-csrf-token'] = csrf;
    return fetch(`${api.baseUrl}${path}`, { method, headers });
  };
  const client: PortalClient = { cookie, csrfToken: '', request };
  const session = await request('/portal/api/session');
  if (session.status === 200) client.csrfToken = ((await session.json()) as { csrfToken: string }).csrfToken;
  return client;
}
