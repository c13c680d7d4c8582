"""Generates the holiday and early-close data of quoteflow's two independent calendars.

- core (packages/core/src/calendar/exchange-calendar-data.generated.ts) from `exchange_calendars`:
  every weekday without a session is a holiday; every session whose open or close differs from the
  exchange's regular hours is recorded with its local open or close.
- simulator (packages/simulator/src/sim-holidays.generated.ts) from `holidays` (its financial
  calendars, categories public and half_day): a different source, so the conformance test
  (test/calendar-conformance.test.ts) compares two implementations rather than one twice.

Usage: scripts/calendars/setup.sh && scripts/calendars/.venv/bin/python scripts/calendars/generate.py
Then format: pnpm exec prettier --write <the two files>.
"""

import datetime as dt
import importlib.metadata as md
import json
import re
import sys
from collections import Counter
from pathlib import Path

import exchange_calendars as xc
import holidays
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
CORE_OUT = ROOT / "packages/core/src/calendar/exchange-calendar-data.generated.ts"
SIM_OUT = ROOT / "packages/simulator/src/sim-holidays.generated.ts"

# From 2013: HKEX's regular hours (09:30-12:00, 13:00-16:00) hold from 2012-03-05 on, so one set of
# regular hours describes every exchange over the whole range.
START = dt.date(2013, 1, 1)
# Rule-based calendars are generated to here; XSHG stops where its recorded holidays stop.
TARGET_END = dt.date(2028, 12, 31)

# China's State Council publishes next year's holidays each autumn: A-share data is good for the
# years published so far only. The other exchanges' holidays follow rules known years ahead.
PUBLISHING = {"XNYS": "rules", "XNAS": "rules", "XHKG": "rules", "XSHG": "yearly"}


def hhmm(t: pd.Timestamp) -> str:
    return f"{t.hour:02d}:{t.minute:02d}"


def open_calendar(name: str):
    """The calendar from START to TARGET_END, or to the last year exchange_calendars records."""
    end = TARGET_END
    while True:
        try:
            return xc.get_calendar(name, start=START.isoformat(), end=end.isoformat())
        except ValueError as err:  # "holidays are only recorded to the year N"
            m = re.search(r"recorded to the year (\d{4})", str(err))
            if m is None or int(m.group(1)) >= end.year:
                raise
            end = dt.date(int(m.group(1)), 12, 31)


def core_exchange(name: str) -> dict:
    cal = open_calendar(name)
    tz = str(cal.tz)
    sched = cal.schedule
    local = {col: sched[col].dt.tz_convert(tz) for col in sched.columns}
    sessions = [ts.date() for ts in sched.index]
    regular = {}
    for col in ("open", "close", "break_start", "break_end"):
        times = Counter(hhmm(t) for t in local[col] if not pd.isna(t))
        regular[col] = times.most_common(1)[0][0] if times else None
    closes, opens, holidays_ = {}, {}, []
    first, last = sessions[0], sessions[-1]
    session_set = set(sessions)
    day = START
    last_day = dt.date(last.year, 12, 31) if last.month == 12 and last.day >= 24 else last
    while day <= last_day:
        if day.weekday() < 5 and day not in session_set:
            holidays_.append(day.isoformat())
        day += dt.timedelta(days=1)
    for i, d in enumerate(sessions):
        if d.weekday() >= 5:
            sys.exit(f"{name}: weekend session {d} is not supported by the data format")
        o, c = hhmm(local["open"].iloc[i]), hhmm(local["close"].iloc[i])
        if o != regular["open"]:
            opens[d.isoformat()] = o
        if c != regular["close"]:
            closes[d.isoformat()] = c
        bs, be = local["break_start"].iloc[i], local["break_end"].iloc[i]
        if regular["break_start"] is not None:
            if pd.isna(bs):
                # A day without a break must be a morning-only or afternoon-only session, which the
                # regular break clipped to [open, close] describes.
                if not (c <= regular["break_start"] or o >= regular["break_end"]):
                    sys.exit(f"{name}: {d} has no break but spans the regular one ({o}-{c})")
            elif (hhmm(bs), hhmm(be)) != (regular["break_start"], regular["break_end"]):
                sys.exit(f"{name}: {d} has a break {hhmm(bs)}-{hhmm(be)} the data format cannot hold")
    return {
        "timeZone": tz,
        "firstDate": START.isoformat(),
        "lastDate": last_day.isoformat(),
        "publishing": PUBLISHING[name],
        "regular": {
            "open": regular["open"],
            "breakStart": regular["break_start"],
            "breakEnd": regular["break_end"],
            "close": regular["close"],
        },
        "holidays": holidays_,
        "earlyCloses": closes,
        "lateOpens": opens,
        "firstSession": first.isoformat(),
    }


def sim_market(name: str, last_year: int) -> dict:
    """Closed weekdays and half days of `name` per the holidays package, START..last_year."""
    years = range(START.year, last_year + 1)
    closed = holidays.financial_holidays(name, years=years)
    cls = type(closed)
    half = (
        holidays.financial_holidays(name, years=years, categories=("half_day",))
        if "half_day" in cls.supported_categories
        else {}
    )
    return {
        "lastDate": f"{last_year}-12-31",
        "closed": sorted(d.isoformat() for d in closed if d.weekday() < 5),
        "halfDays": sorted(d.isoformat() for d in half if d.weekday() < 5 and d not in closed),
    }


def ts_literal(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def main() -> None:
    xc_version = md.version("exchange_calendars")
    hol_version = md.version("holidays")
    core = {name: core_exchange(name) for name in ("XNYS", "XNAS", "XHKG", "XSHG")}
    for name, data in core.items():
        data["source"] = f"exchange_calendars {xc_version}"
    # The electronic exchange keeps New York's holidays and hours; core reads XNYS's data for it,
    # so a difference in a future exchange_calendars must stop the generation.
    if core.pop("XNAS") != core["XNYS"]:
        sys.exit("XNAS and XNYS sessions differ: give XNAS its own data in trading-calendar.ts")
    CORE_OUT.write_text(
        "// Generated by scripts/calendars/generate.py from the exchange_calendars PyPI package "
        f"({xc_version}).\n// Do not edit: rerun the script (README: past the end of the data).\n"
        "import type { ExchangeCalendarData, ExchangeId } from './exchange-calendar-data.js';\n\n"
        "/** Holidays, early closes and late opens per exchange, with the dates the data covers. */\n"
        "export const EXCHANGE_CALENDAR_DATA: Readonly<Record<Exclude<ExchangeId, 'XNAS' | 'XSHE'>, "
        "ExchangeCalendarData>> = "
        f"{ts_literal(core)};\n"
    )
    sim_last = {
        "us": ("XNYS", int(core["XNYS"]["lastDate"][:4])),
        "hk": ("XHKG", int(core["XHKG"]["lastDate"][:4])),
        "cn": ("XSHG", int(core["XSHG"]["lastDate"][:4])),
    }
    sim = {market: sim_market(name, year) for market, (name, year) in sim_last.items()}
    SIM_OUT.write_text(
        "// Generated by scripts/calendars/generate.py from the holidays PyPI package "
        f"({hol_version}), financial calendars\n// XNYS, XHKG and XSHG: a source independent of "
        "core's (exchange_calendars). Do not edit.\n\n"
        "/** Closed weekdays and half days (US: close 13:00; HK: morning session only) per simulated market. */\n"
        "export const SIM_HOLIDAYS: Readonly<Record<'us' | 'hk' | 'cn', { readonly lastDate: string; "
        "readonly closed: readonly string[]; readonly halfDays: readonly string[] }>> = "
        f"{ts_literal(sim)};\n"
    )
    for name, data in core.items():
        print(
            f"{name}: {data['firstDate']}..{data['lastDate']} {len(data['holidays'])} holidays, "
            f"{len(data['earlyCloses'])} early closes, {len(data['lateOpens'])} late opens",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
