/**
 * What the login flows keep between requests, as the flows see it: the AuthState objects
 * behind it (auth-state.ts) and the records they hold. Apart from the flows (login.ts,
 * pending-authorization.ts, token-endpoint.ts) so that each can name them without the others.
 */
import type { AuthKind } from "./auth-state.ts";

export interface AuthStore {
  put(kind: AuthKind, key: string, value: unknown, ttlS: number): Promise<void>;
  get<T>(kind: AuthKind, key: string): Promise<T | null>;
  take<T>(kind: AuthKind, key: string): Promise<T | null>;
  /** Counts a new code against its user's limit; false (nothing stored) when the user has `limit` live codes. */
  admitCode(userId: string, code: string, ttlS: number, limit: number): Promise<boolean>;
  /** A redeemed code no longer counts against its user. */
  releaseCode(userId: string, code: string): Promise<void>;
}

export interface CodeRecord {
  readonly client_id: string;
  readonly redirect_uri: string;
  readonly user_id: string;
  readonly code_challenge: string;
  readonly nonce: string | null;
  readonly scope: string;
}
