// What a typed command answers, and the one way the stores turn it into a value or a thrown
// `ApiError` (each store catches it and keeps it to show).

import type { ApiError } from "../bindings";

/** A command's answer: its value, or the backend's error. */
export type Ok<T> = { status: "ok"; data: T } | { status: "error"; error: ApiError };

/** The value of `r`, or its error thrown. */
export function unwrap<T>(r: Ok<T>): T {
  if (r.status === "error") throw r.error;
  return r.data;
}
