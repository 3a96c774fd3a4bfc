/**
 * A script's locator and arguments, rebuilt on the shard's Playwright objects. A locator
 * crosses as the steps that made it from its page (k6-compat/runtime/browser-wire.ts
 * LocatorStep): each step is replayed as the Playwright call of the same name, which k6's
 * browser module copies. RegExps cross as their source and flags, and a locator given as an
 * argument (filter({ has })) as its steps: both are made whole again here.
 */
import type { FrameLocator, Locator, Page } from "@cloudflare/playwright";
import { LOCATOR_STEPS, type LocatorStep } from "../../k6-compat/runtime/browser-wire.ts";

const STEPS: ReadonlySet<string> = new Set(LOCATOR_STEPS);

/** The locator `steps` make from `page`: a Locator, or a FrameLocator when the last step enters a frame. */
export function locate(page: Page, steps: readonly LocatorStep[]): Locator | FrameLocator {
  let current: object = page;
  let on = "page";
  for (const { by, args } of steps) {
    if (!STEPS.has(by)) throw new Error(`k6/browser: "${by}" is not a locator step edgeload replays (${LOCATOR_STEPS.join(", ")})`);
    const fn = (current as Record<string, unknown>)[by];
    if (typeof fn !== "function") throw new Error(`k6/browser's ${on}.${by}() does not exist (a frame locator only finds, it has no ${by})`);
    current = fn.apply(current, revive(args, page) as unknown[]) as object;
    on =
      by === "frameLocator" || by === "contentFrame"
        ? "frameLocator"
        : on === "frameLocator" && (by === "first" || by === "last" || by === "nth")
          ? on
          : "locator";
  }
  return current as Locator | FrameLocator;
}

/** The script's arguments as Playwright takes them: RegExps and locators made whole (`page`: where a locator argument is found). */
export function revive(value: unknown, page: Page): unknown {
  if (Array.isArray(value)) return value.map((v) => revive(v, page));
  if (typeof value !== "object" || value === null || value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return value;
  const object = value as Record<string, unknown>;
  if (typeof object.$regexp === "string" && typeof object.flags === "string" && Object.keys(object).length === 2)
    return new RegExp(object.$regexp, object.flags);
  if (Array.isArray(object.$locator) && Object.keys(object).length === 1) return locate(page, object.$locator as LocatorStep[]);
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, revive(v, page)]));
}
