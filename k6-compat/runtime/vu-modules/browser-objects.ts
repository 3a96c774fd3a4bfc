/**
 * k6/browser's objects made of what a call or a page event brought back as data: Request,
 * Response and ConsoleMessage (k6 v1.8.1 browser/request_mapping.go, response_mapping.go,
 * console_message_mapping.go). Their data crossed whole, so their reads answer here, at once;
 * what k6 answers with a promise (allHeaders(), headerValue(), response()) is a promise here
 * too. What would need the browser's object itself (a response's body, a request's frame) is
 * named when called, not answered wrong.
 */
import type { PageEvent, RequestData, ResponseData } from "../browser-wire.ts";
import { guarded, type Methods } from "./browser-proxy.ts";

/** Methods of k6's `kind` that read what did not cross: each throws naming itself. */
function unbuilt(kind: string, names: readonly string[]): Methods {
  const out: Methods = {};
  for (const name of names)
    out[name] = () => {
      throw new Error(`k6/browser's ${kind}.${name}(): not built in edgeload yet (only what crossed with the event is read)`);
    };
  return out;
}

/** A header's value by name, any case, or null (k6's headerValue). */
const headerValue = (headers: Record<string, string>, name: unknown) => headers[String(name).toLowerCase()] ?? null;

/** Headers as k6's headersArray() gives them: one { name, value } a header. */
const headersArray = (headers: Record<string, string>) => Object.entries(headers).map(([name, value]) => ({ name, value }));

/** k6's Response of what crossed: status(), ok(), url(), headers(), its request(). */
export function responseOf(data: ResponseData): Methods {
  return guarded("response", {
    ...unbuilt("response", ["body", "text", "json", "size", "securityDetails", "serverAddr", "frame"]),
    status: () => data.status,
    statusText: () => data.statusText,
    ok: () => data.status === 0 || (data.status >= 200 && data.status <= 299),
    url: () => data.url,
    headers: () => ({ ...data.headers }),
    allHeaders: async () => ({ ...data.headers }),
    headersArray: async () => headersArray(data.headers),
    headerValue: async (name: unknown) => headerValue(data.headers, name),
    // As k6 splits them (http.go HeaderValues): by the exact name, on commas.
    headerValues: async (name: unknown) => (data.headers[String(name)] ?? "").split(","),
    request: () => (data.request ? requestOf(data.request) : null),
  });
}

/** k6's Request of what crossed; failure() is null but for a failed request, response() null but for a finished one. */
export function requestOf(data: RequestData): Methods {
  return guarded("request", {
    ...unbuilt("request", ["frame", "size", "timing", "postDataBuffer"]),
    url: () => data.url,
    method: () => data.method,
    headers: () => ({ ...data.headers }),
    allHeaders: async () => ({ ...data.headers }),
    headersArray: async () => headersArray(data.headers),
    headerValue: async (name: unknown) => headerValue(data.headers, name),
    postData: () => data.postData || null,
    resourceType: () => data.resourceType,
    isNavigationRequest: () => data.isNavigationRequest,
    failure: () => data.failure ?? null,
    response: async () => (data.response ? responseOf(data.response) : null),
  });
}

/** k6's ConsoleMessage: its arguments crossed as their JSON values (JSHandle.jsonValue()). */
export function consoleMessage(event: Extract<PageEvent, { event: "console" }>, page: Methods): Methods {
  return guarded("consoleMessage", {
    type: () => event.type,
    text: () => event.text,
    page: () => page,
    args: () => event.args.map((value) => guarded("jsHandle", { jsonValue: async () => value })),
  });
}

/** What a page event's handler (page.on) or predicate (waitForEvent) is given, as k6 maps it (page_mapping.go mapPageOn). */
export function pageEventObject(event: PageEvent, page: Methods): Methods {
  switch (event.event) {
    case "console":
      return consoleMessage(event, page);
    case "response":
      return responseOf(event.response);
    case "request":
    case "requestfinished":
    case "requestfailed":
    case "route":
      return requestOf(event.request);
    case "page":
      throw new Error("a context's page event is made into its page by the context (browser.ts)");
  }
}
