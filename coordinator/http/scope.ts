/**
 * What a caller may do: "all" (the API token) or "read" (the read-only token, or a
 * dashboard session opened with it). Given by coordinator/http/access.ts and carried by the
 * dashboard's signed grants and sessions (coordinator/http/dashboard-auth.ts), which access.ts
 * reads back: a module of its own so neither of the two imports the other both ways.
 */
export type Scope = "all" | "read";
