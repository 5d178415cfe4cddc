import type { AdminOperator } from '../../shared/config/admin-operators.js';
import { safeEqual } from '../auth/constant-time.js';

/**
 * The operator whose token was presented, or undefined. Every token is compared, whichever matches,
 * so the time taken says nothing about which operator (or how many) exist.
 */
export function operatorOfToken(operators: readonly AdminOperator[], presented: string): AdminOperator | undefined {
  let found: AdminOperator | undefined;
  for (const operator of operators) {
    if (safeEqual(presented, operator.token) && found === undefined) found = operator;
  }
  return found;
}
