/** Most identifiers in one bulk request unless BULK_MAX_ITEMS says otherwise; the OpenAPI documents state it. */
export const DEFAULT_BULK_MAX_ITEMS = 10_000;
