/** Formats simulated records as the wire's decimal strings (spec: all prices and volumes are strings). */
import type { SimProduct } from '../catalogue.js';
import type { SimBar, SimBook } from '../sim-market.js';

/** How CFD depth levels without volume are sent. */
export type CfdDepthVolume = 'omit' | 'empty' | 'zero';

export function wireBar(bar: SimBar, p: SimProduct, emptyVolume = false): Record<string, string> {
  const noVolume = p.minuteVolume === 0;
  return {
    timestamp: String(Math.floor(bar.startMs / 1000)),
    open_price: bar.open.toFixed(p.priceDecimals),
    close_price: bar.close.toFixed(p.priceDecimals),
    high_price: bar.high.toFixed(p.priceDecimals),
    low_price: bar.low.toFixed(p.priceDecimals),
    volume: emptyVolume ? '' : noVolume ? '0' : bar.volume.toFixed(p.volumeDecimals),
    turnover: emptyVolume ? '' : noVolume ? '0' : bar.turnover.toFixed(2),
  };
}

/** Applies the K-line quirks of provider-facts.md ("Known upstream defects") to a wire list. */
export function applyKlineQuirks(
  list: Record<string, string>[],
  newestFirstRepeated: boolean,
  emptyFirstVolume: boolean,
): Record<string, string>[] {
  let out = list.map((r) => ({ ...r }));
  if (newestFirstRepeated) {
    const reversed = [...out].reverse();
    out = [...reversed, ...reversed.map((r) => ({ ...r }))];
  }
  if (emptyFirstVolume && out[0] !== undefined) {
    out[0].volume = '';
    out[0].turnover = '';
  }
  return out;
}

export function wireBook(
  code: string,
  book: SimBook,
  p: SimProduct,
  cfdDepthVolume: CfdDepthVolume,
): Record<string, unknown> {
  const volDecimals = p.productClass === 'crypto' ? p.volumeDecimals : p.family === 'stock' ? 0 : 2;
  const level = ([price, volume]: readonly [number, number]) => {
    const out: Record<string, string> = { price: price.toFixed(p.priceDecimals) };
    if (p.productClass === 'cfd') {
      // Some CFD indices provide no volume (spec, depth section).
      if (cfdDepthVolume === 'empty') out['volume'] = '';
      else if (cfdDepthVolume === 'zero') out['volume'] = '0';
    } else {
      out['volume'] = volume.toFixed(volDecimals);
    }
    return out;
  };
  return {
    code,
    seq: book.seq.toString(),
    tick_time: String(book.tickTimeMs),
    bids: book.bids.map(level),
    asks: book.asks.map(level),
  };
}
