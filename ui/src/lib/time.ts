// Times as the user reads them: RFC 3339 from the backend shown in the local time zone and
// locale (the exact value stays in the element's `datetime` and tooltip).

/** `t` (RFC 3339) in local time; with `seconds` to the second. Text that is not a time is
 *  returned as it is. */
export function localTime(t: string, seconds = false): string {
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return t;
  return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: seconds ? "medium" : "short" });
}
