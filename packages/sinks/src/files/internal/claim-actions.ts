import { normalizeSeriesKey } from '../dataset-log-format.js';
import type { DatasetLog } from '../dataset-log.js';
import type { LogChange } from '../dataset-log-options.js';
import { OWNER_DOMAIN, WRITER_DOMAIN, type DeltaAction } from '../delta/delta-actions.js';
import { FileSinkError } from '../file-sink-error.js';
import { describeWriter, nameSeries } from '../table-claims.js';
import type { TableWriter } from '../table-writer.js';
import { thisProcess, writerVerdict } from './writer-liveness.js';

/** `quoteflow.owner.<series>` naming `writer`, or its removal (the claim given up). */
export function ownerDomain(series: string, writer: string | undefined): DeltaAction {
  return {
    domainMetadata: {
      domain: `${OWNER_DOMAIN}${series}`,
      configuration: writer === undefined ? '{}' : JSON.stringify({ writer }),
      removed: writer === undefined,
    },
  };
}

/** `quoteflow.writer.<id>` holding the writer's record (its id is the domain's), or its removal. */
export function writerDomain(id: string, w: TableWriter | undefined): DeltaAction {
  if (w === undefined)
    return { domainMetadata: { domain: `${WRITER_DOMAIN}${id}`, configuration: '{}', removed: true } };
  const { id: _id, ...record } = w;
  return {
    domainMetadata: {
      domain: `${WRITER_DOMAIN}${id}`,
      configuration: JSON.stringify(record),
      removed: false,
    },
  };
}

/**
 * The claim actions of a commit of `change` by `log`'s writer: the owner domains of the series it
 * claims and gives up, then its writer record, rewritten with the next renewal by every commit of
 * a writer that holds claims (removed with its last claim by `release: 'all'`). A claim also
 * forgets the records of writers that own nothing any more and no longer live (taken over after
 * a crash), so the log does not keep every crashed writer for good.
 */
export function claimActions(
  log: DatasetLog,
  change: LogChange,
  nowMs: number,
  settings: { readonly leaseMs: number; readonly command: string | undefined },
): DeltaAction[] {
  const me = log.writerId;
  const owners = new Map(log.owners);
  const out: DeltaAction[] = [];
  for (const s of new Set(change.claim ?? [])) {
    if (owners.get(s) === me) continue;
    owners.set(s, me);
    out.push(ownerDomain(s, me));
  }
  const release =
    change.release === 'all'
      ? [...owners].filter(([, id]) => id === me).map(([s]) => s)
      : (change.release ?? []).filter((s) => owners.get(s) === me);
  for (const s of release) {
    owners.delete(s);
    out.push(ownerDomain(s, undefined));
  }
  const record = log.writers.get(me);
  if (change.release === 'all') {
    if (record !== undefined) out.push(writerDomain(me, undefined));
  } else if (record !== undefined || (change.claim?.length ?? 0) > 0) {
    const self = thisProcess();
    out.push(
      writerDomain(me, {
        id: me,
        ...self,
        sinceMs: record?.sinceMs ?? nowMs,
        leaseMs: settings.leaseMs,
        renewal: (record?.renewal ?? 0) + 1,
        renewedMs: nowMs,
        ...(settings.command === undefined ? {} : { command: settings.command }),
      }),
    );
  }
  if ((change.claim?.length ?? 0) > 0) {
    const owning = new Set(owners.values());
    for (const [id, w] of log.writers)
      if (id !== me && !owning.has(id) && !writerVerdict(w).live) out.push(writerDomain(id, undefined));
  }
  return out;
}

/**
 * Refuses (`QF_FENCED`) a checkpoint of `log`'s writer that adds rows of a series another writer
 * owns, or of one it claimed and no longer owns (taken over, maybe released since): that writer
 * writes them now, so these rows may repeat its. Series nobody claimed stay open to any writer
 * (the watermarks' `since` check guards them).
 */
export function checkWrites(log: DatasetLog, change: LogChange, claimed: ReadonlySet<string>): void {
  if (change.operation !== 'checkpoint') return;
  const written = new Set([
    ...Object.keys(change.series ?? {}).map(normalizeSeriesKey),
    ...(change.writes ?? []),
  ]);
  const lost = new Map<string | undefined, string[]>();
  for (const s of written) {
    const owner = log.owners.get(s);
    if (owner === log.writerId || (owner === undefined && !claimed.has(s))) continue;
    const list = lost.get(owner);
    if (list === undefined) lost.set(owner, [s]);
    else list.push(s);
  }
  if (lost.size === 0) return;
  const parts = [...lost].map(([id, series]) => {
    const w = id === undefined ? undefined : log.writers.get(id);
    const who =
      id === undefined
        ? 'no longer claimed by this writer (taken over, then released)'
        : `owned by another writer now (${w === undefined ? id : describeWriter(w)})`;
    return `${nameSeries(series)}: ${who}`;
  });
  throw new FileSinkError(
    'QF_FENCED',
    `table ${log.table}: ${parts.join('; ')}: this writer may no longer write them; nothing of this commit is in the table`,
  );
}
