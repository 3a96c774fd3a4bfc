/**
 * `k6/html`'s `parseHTML` and `res.html()`: k6's Selection (a goquery, jQuery-like set of
 * nodes) over cheerio's, with k6's shapes where they differ from jQuery's — `attr(name,
 * default)`, `each(fn(index, element))` giving k6 Elements, `map(fn(index, selection))`
 * returning an array, `get(i)` an Element, `toArray()` Selections, `size()`,
 * `serialize*()` of a form — and the Element methods scripts use (`nodeName()`,
 * `textContent()`, `getAttribute()`, …). Pinned against k6 v1.8.1's output by
 * k6-compat/html.test.ts.
 *
 * cheerio's htmlparser2 build (`cheerio/slim`, ~200 KB minified): it is bundled into a
 * script only when the script uses HTML (k6-compat/bundle.ts), not into every isolate.
 * htmlparser2 is forgiving rather than HTML5's tree-building algorithm (k6 uses Go's
 * x/net/html): markup that relies on implied tags (a `<td>` outside a table) can give
 * another tree.
 */
import { type Cheerio, type CheerioAPI, load } from "cheerio/slim";
import type { AnyNode, Element as DomElement } from "domhandler";

type Predicate = (index: number, element: K6Element) => unknown;
type Filter = string | Predicate | Selection;

/** The document of `html`, as a Selection of its root. */
export function parseHTML(html: unknown): Selection {
  if (typeof html !== "string") throw new TypeError(`parseHTML: HTML source must be a string, not ${typeof html}`);
  const $ = load(html);
  return new Selection($, $.root());
}

export class Selection {
  readonly #$: CheerioAPI;
  readonly #nodes: Cheerio<AnyNode>;
  readonly #previous: Selection | null;

  constructor($: CheerioAPI, nodes: Cheerio<AnyNode>, previous: Selection | null = null) {
    this.#$ = $;
    this.#nodes = nodes;
    this.#previous = previous;
  }

  #wrap(nodes: Cheerio<AnyNode>): Selection {
    return new Selection(this.#$, nodes, this);
  }

  /** A k6 filter (selector, function of (index, Element), or Selection) as cheerio takes it. */
  #filter(f: Filter): string | ((i: number, el: AnyNode) => boolean) | Cheerio<AnyNode> {
    if (typeof f === "string") return f;
    if (f instanceof Selection) return f.#nodes;
    return (i, el) => Boolean(f(i, new K6Element(this.#$, el)));
  }

  attr(name: string, defaultValue?: unknown): unknown {
    const value = this.#nodes.attr(name);
    return value === undefined ? defaultValue : value;
  }
  children(selector?: string): Selection {
    return this.#wrap(this.#nodes.children(selector));
  }
  closest(selector: string): Selection {
    return this.#wrap(this.#nodes.closest(selector));
  }
  contents(): Selection {
    return this.#wrap(this.#nodes.contents());
  }
  data(key?: string): unknown {
    return key === undefined ? this.#nodes.data() : this.#nodes.data(key);
  }
  each(fn: Predicate): Selection {
    this.#nodes.each((i, el) => void fn(i, new K6Element(this.#$, el)));
    return this;
  }
  end(): Selection {
    return this.#previous ?? this;
  }
  eq(index: number): Selection {
    return this.#wrap(this.#nodes.eq(index));
  }
  filter(f: Filter): Selection {
    return this.#wrap(this.#nodes.filter(this.#filter(f) as never));
  }
  find(selector: string): Selection {
    return this.#wrap(this.#nodes.find(selector));
  }
  first(): Selection {
    return this.#wrap(this.#nodes.first());
  }
  get(index?: number): K6Element | K6Element[] | undefined {
    if (index === undefined) return this.#nodes.toArray().map((el) => new K6Element(this.#$, el));
    const el = this.#nodes.get(index);
    return el === undefined ? undefined : new K6Element(this.#$, el);
  }
  has(selector: string): Selection {
    return this.#wrap(this.#nodes.has(selector));
  }
  html(): string {
    return this.#nodes.html() ?? "";
  }
  index(selector?: string): number {
    return selector === undefined ? this.#nodes.index() : this.#nodes.index(selector);
  }
  add(selector: string): Selection {
    return this.#wrap(this.#nodes.add(selector));
  }
  is(f: Filter): boolean {
    return this.#nodes.is(this.#filter(f) as never);
  }
  last(): Selection {
    return this.#wrap(this.#nodes.last());
  }
  /** k6 hands map's callback a Selection of the one node (each's an Element), and keeps undefined as null. */
  map(fn: (index: number, selection: Selection) => unknown): unknown[] {
    return this.#nodes.toArray().map((el, i) => fn(i, this.#wrap(this.#$(el))) ?? null);
  }
  next(selector?: string): Selection {
    return this.#wrap(this.#nodes.next(selector));
  }
  nextAll(selector?: string): Selection {
    return this.#wrap(this.#nodes.nextAll(selector));
  }
  nextUntil(selector: string, filter?: string): Selection {
    return this.#wrap(this.#nodes.nextUntil(selector, filter));
  }
  not(f: Filter): Selection {
    return this.#wrap(this.#nodes.not(this.#filter(f) as never));
  }
  parent(selector?: string): Selection {
    return this.#wrap(this.#nodes.parent(selector));
  }
  parents(selector?: string): Selection {
    return this.#wrap(this.#nodes.parents(selector));
  }
  parentsUntil(selector: string, filter?: string): Selection {
    return this.#wrap(this.#nodes.parentsUntil(selector, filter));
  }
  prev(selector?: string): Selection {
    return this.#wrap(this.#nodes.prev(selector));
  }
  prevAll(selector?: string): Selection {
    return this.#wrap(this.#nodes.prevAll(selector));
  }
  prevUntil(selector: string, filter?: string): Selection {
    return this.#wrap(this.#nodes.prevUntil(selector, filter));
  }
  /** A form's fields as a query string, sorted by name as Go's url.Values encodes them (k6). */
  serialize(): string {
    const fields = [...this.#nodes.serializeArray()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return new URLSearchParams(fields.map((f) => [f.name, f.value])).toString();
  }
  serializeArray(): Array<{ name: string; value: string }> {
    return this.#nodes.serializeArray();
  }
  serializeObject(): Record<string, string> {
    return Object.fromEntries(this.#nodes.serializeArray().map((f) => [f.name, f.value]));
  }
  siblings(selector?: string): Selection {
    return this.#wrap(this.#nodes.siblings(selector));
  }
  size(): number {
    return this.#nodes.length;
  }
  slice(start: number, end?: number): Selection {
    return this.#wrap(this.#nodes.slice(start, end));
  }
  text(): string {
    return this.#nodes.text();
  }
  toArray(): Selection[] {
    return this.#nodes.toArray().map((el) => this.#wrap(this.#$(el)));
  }
  val(): unknown {
    return this.#nodes.val();
  }
}

/** k6's Element: the DOM-like methods of one node. */
export class K6Element {
  readonly #$: CheerioAPI;
  readonly #node: AnyNode;

  constructor($: CheerioAPI, node: AnyNode) {
    this.#$ = $;
    this.#node = node;
  }

  get #element(): DomElement | null {
    return "attribs" in this.#node ? (this.#node as DomElement) : null;
  }

  nodeName(): string {
    const el = this.#element;
    if (el) return el.name.toLowerCase();
    return this.#node.type === "text" ? "#text" : this.#node.type === "comment" ? "#comment" : "#document";
  }
  nodeType(): number {
    return this.#node.nodeType;
  }
  id(): string {
    return this.#element?.attribs.id ?? "";
  }
  className(): string {
    return this.#element?.attribs.class ?? "";
  }
  classList(): string[] {
    return this.className().split(/\s+/).filter(Boolean);
  }
  textContent(): string {
    return this.#$(this.#node).text();
  }
  innerHTML(): string {
    return this.#$(this.#node).html() ?? "";
  }
  getAttribute(name: string): string | undefined {
    return this.#element?.attribs[name];
  }
  hasAttribute(name: string): boolean {
    return this.#element ? Object.hasOwn(this.#element.attribs, name) : false;
  }
  hasAttributes(): boolean {
    return this.#element ? Object.keys(this.#element.attribs).length > 0 : false;
  }
  /** Attributes by name, as k6 gives them: `{ name: { name, value } }`. */
  attributes(): Record<string, { name: string; value: string }> {
    return Object.fromEntries(Object.entries(this.#element?.attribs ?? {}).map(([name, value]) => [name, { name, value }]));
  }
  hasChildNodes(): boolean {
    return "children" in this.#node && this.#node.children.length > 0;
  }
  childElementCount(): number {
    return this.#$(this.#node).children().length;
  }
  matches(selector: string): boolean {
    return this.#$(this.#node).is(selector);
  }
  querySelector(selector: string): K6Element | undefined {
    const found = this.#$(this.#node).find(selector).get(0);
    return found === undefined ? undefined : new K6Element(this.#$, found);
  }
  querySelectorAll(selector: string): K6Element[] {
    return this.#$(this.#node)
      .find(selector)
      .toArray()
      .map((el) => new K6Element(this.#$, el));
  }
  getElementsByTagName(name: string): K6Element[] {
    return this.querySelectorAll(name);
  }
  parentNode(): K6Element | undefined {
    return this.#node.parent ? new K6Element(this.#$, this.#node.parent) : undefined;
  }
  toString(): string {
    return `[object ${this.nodeName()}]`;
  }
}
