import { QuoteflowError } from '@quoteflow/core';

/**
 * The token's daily budget is spent and `--exit-when-budget-spent` asked to exit rather than wait
 * for its reset (`QF_DAILY_BUDGET_SPENT`): exit code 75 (`EXIT.budgetSpent`). The message says how
 * much was used of what, and when the budget resets.
 */
export class DailyBudgetSpentError extends QuoteflowError {
  declare readonly code: 'QF_DAILY_BUDGET_SPENT';
  constructor(message: string) {
    super('QF_DAILY_BUDGET_SPENT', message);
  }
}
