/**
 * k6/data for one VU: SharedArray, whose data is built once per isolate and shared, frozen,
 * by every VU in it (VuContext.shared).
 */
import type { VuContext } from "./context.ts";

export function createData(vu: VuContext) {
  return {
    SharedArray: function SharedArray(name: string, build: () => unknown[]) {
      if (typeof build !== "function") throw new Error("SharedArray needs a name and a function that returns an array");
      let values = vu.shared.get(name);
      if (!values) {
        const built = build();
        if (!Array.isArray(built)) throw new Error(`SharedArray "${name}": the function must return an array`);
        values = Object.freeze(built.map((v) => Object.freeze(v)));
        vu.shared.set(name, values);
      }
      return values;
    },
  };
}
