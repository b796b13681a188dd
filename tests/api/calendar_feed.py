"""Reads a calendar feed with a real iCalendar parser (the `icalendar` package) and prints what
it found as JSON, for tests/api/calendar.rs to check against the cards.

Usage: python3 calendar_feed.py FILE.ics
Exits non-zero when the document does not parse, or a component reports parse errors.
"""

import datetime
import json
import sys

from dateutil.rrule import rrulestr
from icalendar import Calendar

# How many dates of a repeating event are listed (`occurrences`).
OCCURRENCES = 6


def when(value):
    """A DTSTART/DTEND value: its kind (date, floating, zoned) and ISO text."""
    if isinstance(value, datetime.datetime):
        kind = "floating" if value.tzinfo is None else "zoned"
        return {"kind": kind, "iso": value.isoformat()}
    return {"kind": "date", "iso": value.isoformat()}


def stamp_ms(value):
    """A UTC DATE-TIME as ms since the epoch (the parser must read it as UTC)."""
    assert value.tzinfo is not None, f"not UTC: {value!r}"
    return int(value.timestamp() * 1000)


def main():
    with open(sys.argv[1], "rb") as f:
        calendar = Calendar.from_ical(f.read())
    errors = [
        (c.name, e) for c in calendar.walk() for e in getattr(c, "errors", [])
    ]
    if errors:
        print(f"parse errors: {errors}", file=sys.stderr)
        sys.exit(1)
    events = []
    for ev in calendar.walk("VEVENT"):
        start = ev.decoded("DTSTART")
        params = dict(ev["DTSTART"].params)
        alarms = []
        for alarm in ev.walk("VALARM"):
            trigger = alarm.decoded("TRIGGER")
            alarms.append(
                {
                    "action": str(alarm["ACTION"]),
                    "triggerSeconds": int(trigger.total_seconds()),
                    "description": str(alarm.get("DESCRIPTION", "")),
                }
            )
        rrule = ev.get("RRULE")
        occurrences = None
        if rrule is not None:
            # The dates the rule gives, expanded by dateutil (icalendar's own dependency).
            first = start
            if not isinstance(first, datetime.datetime):
                first = datetime.datetime.combine(first, datetime.time())
            rule = rrulestr(rrule.to_ical().decode(), dtstart=first)
            occurrences = [d.date().isoformat() for d in rule[:OCCURRENCES]]
        events.append(
            {
                "uid": str(ev["UID"]),
                "summary": str(ev["SUMMARY"]),
                "description": str(ev.get("DESCRIPTION", "")),
                "location": str(ev["LOCATION"]) if "LOCATION" in ev else None,
                "url": str(ev["URL"]) if "URL" in ev else None,
                "start": when(start),
                "startParams": params,
                "end": when(ev.decoded("DTEND")) if "DTEND" in ev else None,
                "lastModified": stamp_ms(ev.decoded("LAST-MODIFIED")),
                "dtstamp": stamp_ms(ev.decoded("DTSTAMP")),
                "alarms": alarms,
                "rrule": rrule.to_ical().decode() if rrule is not None else None,
                "occurrences": occurrences,
            }
        )
    print(
        json.dumps(
            {
                "version": str(calendar["VERSION"]),
                "prodid": str(calendar["PRODID"]),
                "name": str(calendar.get("X-WR-CALNAME", "")),
                "events": events,
            }
        )
    )


if __name__ == "__main__":
    main()
