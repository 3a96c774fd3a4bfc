/**
 * k6/html for one VU: a slot for the HTML parser, which travels only with the scripts that
 * use HTML (~200 KB, k6-compat/bundle.ts). The bundle installs cheerio's parser
 * (../html.ts) into it; res.html() (http.ts) and parseHTML read it from there.
 */
import type { HtmlParser } from "../k6-response.ts";

export function createHtml(): { readonly parse: HtmlParser; readonly module: Record<string, unknown> } {
  let htmlParser: HtmlParser | null = null;
  const parse: HtmlParser = (source) => {
    if (!htmlParser)
      throw new Error(
        "res.html()/parseHTML: the HTML parser was not bundled with this script (edgeload adds it when a script calls .html( or imports k6/html)",
      );
    return htmlParser(source);
  };
  return { parse, module: { parseHTML: parse, install: (parser: HtmlParser) => void (htmlParser = parser) } };
}
