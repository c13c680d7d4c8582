/**
 * The token's daily budget is spent and `--exit-when-budget-spent` asked to exit rather than wait
 * for its reset: exit code 75 (`EXIT.budgetSpent`). The message says how much was used of what,
 * and when the budget resets.
 */
export class DailyBudgetSpentError extends Error {
  readonly code = 'QF_DAILY_BUDGET_SPENT';
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}
