export { ClusterError, CLUSTER_ERROR_CODES } from './cluster-error.js';
export type { ClusterErrorCode } from './cluster-error.js';
export { RedisWindowStore } from './redis-window-store.js';
export type { RedisStartTicket } from './redis-window-store.js';
export { REDIS_WINDOW_STORE_DEFAULTS } from './redis-window-store-options.js';
export type {
  RedisWindowStoreOptions,
  RedisQuotaEvent,
  RedisWindowStoreStats,
} from './redis-window-store-options.js';
export { SharedPlanScheduler } from './shared-plan-scheduler.js';
export type { SharedPlanSchedulerOptions, SharedPlanSchedulerStats } from './shared-plan-scheduler.js';
export { rendezvousOwner, rendezvousShare, balancedShares } from './rendezvous.js';
export { batchKlineUnits } from './batch-kline-units.js';
export { ClusterMembership, CLUSTER_MEMBERSHIP_DEFAULTS } from './cluster-membership.js';
export type { ClusterMembershipOptions, MembershipView } from './cluster-membership.js';
export { clusterSync } from './cluster-sync.js';
export type {
  ClusterSyncOptions,
  ClusterSyncEvent,
  ClusterSyncHandle,
  ShareableRun,
  WorkLease,
} from './cluster-sync.js';
export type { RedisLike } from './internal/redis-connection.js';
export { ClusterWorker, syncGroupName } from './cluster-worker.js';
export type { ClusterWorkerOptions } from './cluster-worker.js';
