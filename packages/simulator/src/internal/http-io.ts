/** Request reading and response writing, with fault injection at the byte level. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultKind, FaultRule } from '../fault-injector.js';
import type { SimLogEntry } from '../request-log.js';

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export function traceOf(url: URL, body: string | undefined): string {
  try {
    const j: unknown = JSON.parse(body ?? url.searchParams.get('query') ?? '');
    if (typeof j === 'object' && j !== null && typeof (j as { trace?: unknown }).trace === 'string')
      return (j as { trace: string }).trace;
  } catch {
    // no trace to echo
  }
  return '';
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_BODY_BYTES) break;
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function send(
  res: ServerResponse,
  entry: SimLogEntry,
  status: number,
  payload: unknown,
  injected: readonly FaultRule[],
): Promise<void> {
  const latency = injected
    .filter((f) => f.kind === 'latency')
    .reduce((sum, f) => sum + (f.latencyMs ?? 1000), 0);
  if (latency > 0) await new Promise((r) => setTimeout(r, latency));
  const has = (k: FaultKind) => injected.find((f) => f.kind === k);
  if (has('drop') !== undefined) {
    entry.status = 0;
    entry.done = true;
    res.socket?.destroy();
    return;
  }
  const http5xx = has('http-5xx');
  if (http5xx !== undefined) {
    const code = http5xx.status ?? 503;
    entry.status = code;
    entry.done = true;
    res.writeHead(code, { 'content-type': 'text/html' });
    res.end(`<html><body><h1>${code} Service Unavailable</h1></body></html>`);
    return;
  }
  let text = JSON.stringify(payload);
  if (has('malformed-json') !== undefined)
    text = `{"ret":${status === 200 ? 200 : status},"msg":"ok",,${text.slice(1)}`;
  else if (has('truncated') !== undefined) text = text.slice(0, Math.max(1, Math.floor(text.length / 2)));
  entry.status = status;
  entry.done = true;
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
