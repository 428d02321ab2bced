// A reference to an agent from elsewhere in the config, said in words: who holds it and what it
// lets them do. The config path stays out of the text (the pane gives it as a tooltip).

import type { AccessMode, AgentReference, ReferenceKind } from "../bindings";

/** A sentence in three parts, the holder's name between them so it can be emphasised. */
export type ReferenceSentence = { before: string; holder: string; after: string };

const ACCESS: Record<AccessMode, string> = { read: "read", write: "write", read_write: "read-write" };

/** "bob may delegate to it", "bob has read-write access to its workspace", "bob reads its
 *  memory", "cron job nightly runs as it (blocks deletion)". */
export function referenceSentence(r: AgentReference): ReferenceSentence {
  const holder = r.holder;
  switch (r.kind) {
    case "delegate":
      return { before: "", holder, after: " may delegate to it" };
    case "workspace_access":
      return {
        before: "",
        holder,
        after: r.access ? ` has ${ACCESS[r.access]} access to its workspace` : " has access to its workspace",
      };
    case "read_memory_from":
      return { before: "", holder, after: " reads its memory" };
    case "cron_agent":
      return {
        before: "cron job ",
        holder,
        after: r.blocks_delete ? " runs as it (blocks deletion)" : " runs as it (disabled)",
      };
  }
}

const KIND: Record<ReferenceKind, string> = {
  delegate: "delegation",
  workspace_access: "workspace access",
  read_memory_from: "memory reads",
  cron_agent: "cron job",
};

/** What kind of reference a config entry is, in words ("workspace access"), for plans that list
 *  the entries a rename rewrites or a delete removes. */
export function referenceKindWords(kind: ReferenceKind): string {
  return KIND[kind];
}
