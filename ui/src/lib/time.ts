// Times as the user reads them: RFC 3339 from the backend shown in the local time zone and
// locale (the exact value stays in the element's `datetime` and tooltip).

/** `t` (RFC 3339) in local time; with `seconds` to the second. Text that is not a time is
 *  returned as it is. */
export function localTime(t: string, seconds = false): string {
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return t;
  return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: seconds ? "medium" : "short" });
}

/** How long something asked at `since` (RFC 3339) has waited at `now` (ms since the epoch), in
 *  words: "just now", "for 40 s", "for 3 min", "for 2 h 5 min", else since a local time. */
export function waitedFor(since: string, now: number): string {
  const t = new Date(since).getTime();
  if (Number.isNaN(t)) return since;
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 5) return "waiting: just now";
  if (s < 60) return `waiting for ${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `waiting for ${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return `waiting for ${h} h${m % 60 ? ` ${m % 60} min` : ""}`;
  return `waiting since ${localTime(since)}`;
}

/** A log line's time (RFC 3339) in local time to the millisecond, on a 24-hour clock, with its
 *  day when that is not `now`'s. Text that is not a time is returned as it is. */
export function logTime(t: string, now: Date = new Date()): string {
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return t;
  const time = d.toLocaleTimeString(undefined, {
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    fractionalSecondDigits: 3,
    hourCycle: "h23",
  });
  if (d.toDateString() === now.toDateString()) return time;
  return `${d.toLocaleDateString(undefined, { month: "short", day: "numeric" })} ${time}`;
}
