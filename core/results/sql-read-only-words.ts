/**
 * The words the read-only SQL filter (read-only-sql.ts) knows: the functions a results query
 * may call, the keywords that may stand before a `(`, and the keywords of statements that
 * write. Functions are an allow-list on purpose: a function the list does not name is
 * refused, so a SQLite build or a D1 release that adds one (an extension loader, a page
 * reader) does not widen what a read-only token can do until someone adds it here.
 *
 * All names are lower case; the filter compares ASCII-lower-cased (sql-tokens.ts asciiLower).
 */

/** The set of the whitespace-separated words of `lists`. */
const names = (...lists: string[]): ReadonlySet<string> => new Set(lists.join(" ").split(/\s+/).filter(Boolean));

/**
 * Functions that compute on their arguments or on the rows of the query and change nothing:
 * SQLite's core scalar, aggregate, window, date and time, math and JSON functions, plus the
 * table-valued json_each/json_tree and the schema-describing pragma functions.
 *
 * Left out, with the reason:
 * - load_extension: loads native code. Never.
 * - randomblob, zeroblob: a blob as large as asked, to fill memory (D1 caps a value at 2 MB,
 *   the CLI's local SQLite at 1 GB); nothing a results query needs.
 * - sqlite_* (sqlite_version, sqlite_source_id, sqlite_compileoption_get/used, sqlite_offset):
 *   they describe the engine, not the results, and what a build reports about itself helps
 *   an attacker more than a user.
 * - changes, total_changes, last_insert_rowid: about writes, which this route never makes.
 * - fts3_tokenizer, FTS/R-Tree helpers, and anything a build adds (readfile, writefile,
 *   generate_series…): not needed, and some touch memory or files.
 *
 * printf/format can still pad a value to a large width; D1's 2 MB value limit and 30 s query
 * limit bound that, as they bound a large cross join.
 */
export const READ_ONLY_FUNCTIONS: ReadonlySet<string> = names(
  // aggregates
  `avg count group_concat string_agg max min sum total median percentile percentile_cont
   percentile_disc json_group_array jsonb_group_array json_group_object jsonb_group_object`,
  // window functions
  `row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value
   nth_value`,
  // scalar
  `abs char coalesce concat concat_ws format glob hex if ifnull iif instr length like likelihood
   likely lower ltrim nullif octet_length printf quote random replace round rtrim sign soundex
   substr substring trim typeof unhex unicode unistr unistr_quote unlikely upper`,
  // date and time
  `date time datetime julianday unixepoch strftime timediff current_date current_time
   current_timestamp`,
  // math
  `acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees exp floor ln log log10 log2
   mod pi pow power radians sin sinh sqrt tan tanh trunc`,
  // JSON (json_set, json_insert… return a new JSON text; they write no table)
  `json jsonb json_array jsonb_array json_array_length json_error_position json_extract
   jsonb_extract json_insert jsonb_insert json_object jsonb_object json_patch jsonb_patch
   json_pretty json_quote json_remove jsonb_remove json_replace jsonb_replace json_set jsonb_set
   json_type json_valid`,
  // table-valued
  `json_each jsonb_each json_tree jsonb_tree`,
  // schema-describing pragma tables
  `pragma_table_info pragma_table_xinfo pragma_table_list pragma_index_list pragma_index_info
   pragma_index_xinfo pragma_foreign_key_list`,
);

/**
 * Pragma functions are also tables (`SELECT * FROM pragma_compile_options`, no parentheses),
 * so a `pragma_*` name anywhere must be one of these: they describe the results schema, which
 * SCHEMA.md publishes anyway. Others report file paths, the build, or memory.
 */
export const READ_ONLY_PRAGMA_TABLES: ReadonlySet<string> = new Set([...READ_ONLY_FUNCTIONS].filter((f) => f.startsWith("pragma_")));

/**
 * SQLite's own tables a query may read: the schema (the CREATE statements of SCHEMA.md's
 * tables, nothing secret). Every other `sqlite_*` name is refused: sqlite_dbpage, where a
 * build has it, returns raw database pages — the settings table's secret among them.
 */
export const READABLE_SQLITE_TABLES: ReadonlySet<string> = names(`sqlite_master sqlite_schema sqlite_temp_master sqlite_temp_schema`);

/**
 * Keywords that may stand right before `(` in a SELECT: `IN (`, `EXISTS (`, `CAST (`,
 * `OVER (`, `AS (` of a CTE… None of them is the name of a function that writes or loads
 * anything, so letting `like(…)` or `match(…)` through as keywords is safe.
 */
export const KEYWORDS_BEFORE_PAREN: ReadonlySet<string> = names(
  `all and as between by case cast distinct else escape except exists filter from glob groups
   having in intersect is join like limit match materialized not offset on or over range regexp
   rows select then union using values when where`,
);

/**
 * Keywords of statements that write or change state, refused wherever they stand outside a
 * string or quoted name. INTO and RETURNING belong only to writing statements. REPLACE is also
 * a string function: `replace(` is allowed, a bare REPLACE (`REPLACE INTO`) is not.
 */
export const WRITING_KEYWORDS: ReadonlySet<string> = names(
  `insert update delete replace upsert drop alter create attach detach pragma vacuum reindex
   analyze begin commit rollback savepoint release returning into`,
);

/** The first word of a statement the route runs. */
export const READING_STATEMENTS: ReadonlySet<string> = names(`select with values`);
