/**
 * The bytes of request bodies being read before anyone knows who sent them, across every request of
 * this API process. A merchant's signature is inside the body, so the body is read before the
 * signature is checked; each one is bounded (http/body-limits.ts), but without a bound on their sum,
 * many slow uploads (each declaring 2 MiB and trickling it for HTTP_REQUEST_TIMEOUT_MS) would hold
 * memory without limit. A body reserves its size here before a byte is read (the declared
 * Content-Length, or the route's limit when none is declared) and gives it back when it has been read,
 * refused, or abandoned; a body that finds no room is refused before it is read.
 *
 * Large bodies (the bulk routes') together may hold at most half of the bound: the other half stays
 * for the small bodies every signed read and single cancel sends, so slow bulk uploads alone cannot
 * crowd them out.
 */
export class BodyBudget {
  private reservedBytes = 0;
  private reservedLargeBytes = 0;

  constructor(
    readonly limitBytes: number,
    /** Bodies above this size are large (SMALL_BODY_LIMIT_BYTES). */
    private readonly smallBodyBytes: number,
    /** Told the bytes reserved at each change (the `gateway_http_unauthenticated_body_bytes` gauge). */
    private readonly gauge?: { set(value: number): void },
  ) {}

  /** Bytes reserved now. */
  get reserved(): number {
    return this.reservedBytes;
  }

  /** A reservation of `bytes`, to be released exactly once, or null when there is no room for it. */
  reserve(bytes: number): BodyReservation | null {
    const large = bytes > this.smallBodyBytes;
    if (this.reservedBytes + bytes > this.limitBytes) return null;
    if (large && this.reservedLargeBytes + bytes > this.limitBytes / 2) return null;
    this.reservedBytes += bytes;
    if (large) this.reservedLargeBytes += bytes;
    this.gauge?.set(this.reservedBytes);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.reservedBytes -= bytes;
        if (large) this.reservedLargeBytes -= bytes;
        this.gauge?.set(this.reservedBytes);
      },
    };
  }
}

export interface BodyReservation {
  release(): void;
}
