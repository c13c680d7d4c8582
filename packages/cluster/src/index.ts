export { ClusterError, CLUSTER_ERROR_CODES } from './cluster-error.js';
export type { ClusterErrorCode } from './cluster-error.js';
export { RedisQuota, REDIS_QUOTA_DEFAULTS } from './redis-quota.js';
export type { RedisQuotaOptions, RedisQuotaEvent, RedisQuotaStats } from './redis-quota.js';
export { SharedPlanScheduler } from './shared-plan-scheduler.js';
export type { SharedPlanSchedulerOptions, SharedPlanSchedulerStats } from './shared-plan-scheduler.js';
export type { RedisLike } from './internal/redis-connection.js';
