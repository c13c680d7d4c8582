// The options of a dataset log and what its transactions commit (DatasetLog, dataset-log.ts).
import type { LogEntry, LogFile, LogOperation, SeriesWatermark } from './dataset-log-format.js';
import type { PublishLockOptions } from './internal/publish-lock.js';
import type { ObjectStore } from './storage/object-store.js';

/** What a file on disk that no commit named holds (for `adopt`): its rows, and per series what they add. */
export interface FileSummary {
  readonly rows: number;
  readonly series?: Readonly<Record<string, SeriesWatermark>>;
}

/** Options of `DatasetLog.open`. */
export interface DatasetLogOptions {
  /** Wall-clock time (epoch ms) for commit times and the publish lock, shared by every process. */
  readonly now?: () => number;
  readonly lock?: PublishLockOptions;
  /** A log compaction (`0.<v>.compacted.json`, the whole state) is written every this many versions. @defaultValue 100 */
  readonly snapshotEvery?: number;
  /** Reads a file found on disk that no commit named. @defaultValue rows unknown (-1), no series */
  readonly summarize?: (relativePath: string) => Promise<FileSummary>;
  /**
   * Where the table lives when not under `root` on this disk: an S3 bucket and prefix
   * (`openS3Store`). `root` is then a local scratch directory holding the staged files a commit
   * uploads. @defaultValue the local directory `root`
   */
  readonly store?: ObjectStore;
  /**
   * On object storage: told when a Delta checkpoint (written with each log compaction) could not
   * be written; the commit stands and readers read the commits. @defaultValue a process warning
   */
  readonly onCheckpointError?: (error: Error) => void;
  /**
   * On object storage: removed files are kept in log compactions and checkpoints this long after
   * their removal (Delta's `deletedFileRetentionDuration`), so that a vacuum can tell their age;
   * older ones are only forgotten (a vacuum still finds the files by their age). @defaultValue 7 days
   */
  readonly tombstoneRetentionMs?: number;
  /**
   * How long this writer's claims stay its own without a renewal, for writers on other machines
   * (see `DatasetLog.claim`). @defaultValue 300,000 ms
   */
  readonly leaseMs?: number;
  /** What this writer is (`quoteflow sync`), shown to another writer that meets its claims. */
  readonly command?: string;
}

/** What a transaction commits (the log fills in version, time and writer). */
export interface LogChange {
  readonly operation: LogOperation;
  readonly add: readonly LogFile[];
  readonly remove?: readonly string[];
  readonly series?: Readonly<Record<string, SeriesWatermark>>;
  readonly swap?: { readonly partition: string; readonly staged: string };
  /**
   * On object storage: asked right before each conditional PUT of the version (after the upload);
   * false refuses the commit with `QF_FENCED` (a cluster worker whose lease lapsed).
   */
  readonly fence?: () => boolean;
  /**
   * On object storage: the version whose watermarks the change's series build on (when the writer
   * last read them). A version after it in which another writer committed one of these series
   * refuses the commit (`QF_FENCED`): that writer took the series over, so this one's bars may
   * repeat its. The log refuses it, whatever the writer's lease says. @defaultValue the version
   * the transaction started from
   */
  readonly since?: number;
  /**
   * Series this commit claims for this writer (`operation: 'claim'`; see `DatasetLog.claim`):
   * each `quoteflow.owner.<series>` names it from this version on.
   */
  readonly claim?: readonly string[];
  /** This writer's claims the commit gives up; `'all'` also removes its writer record. */
  readonly release?: readonly string[] | 'all';
  /**
   * Series a checkpoint adds rows of besides those of `series` (depth: codes; suspension:
   * exchanges). A checkpoint writing a series another writer owns, or one this writer claimed and
   * no longer owns (taken over), is refused (`QF_FENCED`).
   */
  readonly writes?: readonly string[];
  /**
   * Asked against the log the commit builds on (locally holding the publish lock; on object
   * storage before the upload and again after each version taken meanwhile): a throw refuses it.
   */
  readonly precondition?: () => void;
}

/** Inside `DatasetLog.transaction`: the publish lock is held and the log is current. */
export interface DatasetTransaction {
  /** Commits the change as the next version, then publishes it (renames, partition swap). */
  commit(change: LogChange): Promise<LogEntry>;
}
