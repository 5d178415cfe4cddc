/** The merchant API's routes the bench loads (src/api routes; the raw baseline's are in raw-baseline/paths.ts). */
export const CANCEL_PATH = '/api/v1/integration/rewards/cancel';
export const BULK_CANCEL_PATH = '/api/v1/integration/rewards/bulkCancel';
export const BULK_CANCEL_BY_QUERY_PATH = '/api/v1/integration/rewards/bulkCancelByQuery';
export const JOB_REWARDS_PATH = '/api/v1/integration/jobs/rewards';
export const READ_ALL_PATH = '/api/v1/integration/reward-configurations/readAll';
export const BET_SLIP_PATH = '/betSlip';
