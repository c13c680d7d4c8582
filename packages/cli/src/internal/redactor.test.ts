import { describe, expect, it } from 'vitest';
import { Redactor } from './redactor.js';

describe('Redactor', () => {
  it('masks a long token wherever it stands, raw, URL-encoded and JSON-escaped', () => {
    const r = new Redactor();
    r.add('s3cr3t/token+value');
    expect(r.redact('x s3cr3t/token+value y s3cr3t%2Ftoken%2Bvalue')).toBe('x *** y ***');
    const quoted = new Redactor();
    quoted.add('tok"en\\value-1234');
    expect(quoted.redact(JSON.stringify({ msg: 'bad tok"en\\value-1234' }))).toBe('{"msg":"bad ***"}');
  });

  it('masks a short token (a common word) only where a token is written, so `quoteflow demo` stays as it is', () => {
    const r = new Redactor();
    r.add('demo');
    expect(r.redact('Usage: quoteflow demo [options]')).toBe('Usage: quoteflow demo [options]');
    expect(r.redact("paste: read_parquet('./quoteflow-demo/kline/**')")).toBe(
      "paste: read_parquet('./quoteflow-demo/kline/**')",
    );
    expect(r.redact('GET /kline?code=A&token=demo&x=1')).toBe('GET /kline?code=A&token=***&x=1');
    expect(r.redact('{"token":"demo","plan":"basic"}')).toBe('{"token":"***","plan":"basic"}');
    expect(r.redact('quoteflow sync --token demo --codes A')).toBe('quoteflow sync --token *** --codes A');
    expect(r.redact('Authorization: Bearer demo')).toBe('Authorization: Bearer ***');
    expect(r.redact('token=demonstration')).toBe('token=demonstration');
  });
});
