/**
 * How the shard's browser host (browser-host.ts) makes a call on a Playwright object: the
 * script's arguments as they are (k6 copies Playwright's API), a page's input actions one
 * after another, and k6's own answer where Playwright's differs (isEditable).
 */
import type { ElementHandle, FrameLocator, Locator } from "@cloudflare/playwright";
import type { BrowserTarget } from "../../k6-compat/runtime/browser-wire.ts";

/** The element actions that move the page's one mouse or keyboard (and its focus). */
const INPUT_ACTIONS: ReadonlySet<string> = new Set([
  "click",
  "dblclick",
  "fill",
  "type",
  "press",
  "check",
  "uncheck",
  "setChecked",
  "hover",
  "tap",
  "selectOption",
  "clear",
  "selectText",
]);

export const usesInput = (kind: BrowserTarget["kind"], method: string) =>
  kind === "keyboard" || kind === "mouse" || kind === "touchscreen" || INPUT_ACTIONS.has(method);

/**
 * Runs a page's input action after the ones before it. A page has one mouse and one keyboard:
 * two clicks a script starts at once (k6-utils' check() runs its predicates together) would
 * interleave their moves and land on each other's element, where k6 makes them one by one.
 * Waits (waitForNavigation beside a click) and reads are not held.
 */
export function inputInOrder(open: { inputs: Promise<unknown> }, action: () => Promise<unknown>): Promise<unknown> {
  const run = open.inputs.then(action);
  open.inputs = run.catch(() => undefined);
  return run;
}

/**
 * k6's editable state (its injected script's checkElementState): not disabled, and no
 * readonly attribute on an input, textarea or select. Playwright's isEditable throws for any
 * other element (a div), where k6 answers true. Runs in the page.
 */
function k6Editable(element: { nodeName: string; hasAttribute(name: string): boolean }): boolean {
  const disabled = ["BUTTON", "INPUT", "SELECT", "TEXTAREA"].includes(element.nodeName) && element.hasAttribute("disabled");
  const readonly = ["INPUT", "TEXTAREA", "SELECT"].includes(element.nodeName) && element.hasAttribute("readonly");
  return !disabled && !readonly;
}

/** A call on an element (a locator or a handle): as Playwright's, but isEditable as k6 answers it. */
export function elementCall(element: Locator | FrameLocator | ElementHandle, method: string, args: readonly unknown[]): Promise<unknown> {
  if (method === "isEditable" && "evaluate" in element) return (element as Locator).evaluate(k6Editable);
  return invoke(element, method, args);
}

/** One of the listed methods on a Playwright object, with the script's arguments as they are (k6 copies Playwright's). */
export function invoke(object: object, method: string, args: readonly unknown[]): Promise<unknown> {
  const fn = (object as Record<string, unknown>)[method];
  if (typeof fn !== "function") throw new Error(`${method}() is not available on this browser object`);
  return Promise.resolve(fn.apply(object, args));
}
