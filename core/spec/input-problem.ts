/** One problem with the input, RFC 9457-style: which field, what is wrong. */
export interface Problem {
  readonly field: string;
  readonly detail: string;
}
