import { sql } from 'kysely';

/**
 * The configuration filter of a bulkCancelByQuery: the worker's slices apply it and the API's dry run
 * counts with it, so both sides select the same rewards.
 */
export interface QueryFilter {
  rewardConfigurationId?: string;
  externalRewardConfigurationId?: string;
}

/** The filter as conditions on `rewards r`. */
export function configurationCondition(merchantId: string, filter: QueryFilter) {
  const conditions = [];
  if (filter.rewardConfigurationId !== undefined) {
    conditions.push(sql`AND r.reward_configuration_id = ${filter.rewardConfigurationId}::uuid`);
  }
  if (filter.externalRewardConfigurationId !== undefined) {
    // Both ids given: the configuration must match both (docs/design.md §4).
    conditions.push(sql`AND r.reward_configuration_id IN (
      SELECT rc.id FROM reward_configurations rc
      WHERE rc.merchant_id = ${merchantId} AND rc.external_id = ${filter.externalRewardConfigurationId}
    )`);
  }
  return sql.join(conditions, sql` `);
}
