/**
 * k6/browser's `devices`: k6's descriptors of end-user devices, which a script passes to
 * browser.newContext(devices["iPhone X"]) to emulate one (its viewport, deviceScaleFactor,
 * isMobile, hasTouch and userAgent are Playwright's context options of the same names, so the
 * shard's browser takes them as they are).
 *
 * The data is k6 v1.8.1's, internal/js/modules/k6/browser/common/device.go (GetDevices), the
 * same names and values. It is kept here grouped by user agent, each device once: k6 lists a
 * "<name> landscape" twin of every device but the Microsoft Lumia 550, with the same user agent
 * and scale and its width and height swapped, which is made from it below. Every descriptor in
 * k6's table is a mobile device with touch.
 */

/** k6's Device (common/device.go): what browser.newContext takes of it. */
export interface BrowserDevice {
  readonly name: string;
  readonly userAgent: string;
  readonly viewport: { readonly width: number; readonly height: number };
  readonly deviceScaleFactor: number;
  readonly isMobile: boolean;
  readonly hasTouch: boolean;
}

/** A device of k6's table standing upright: name, viewport width and height, deviceScaleFactor, and whether k6 has no landscape twin of it. */
type UprightDevice = readonly [name: string, width: number, height: number, deviceScaleFactor: number, noLandscape?: typeof NO_LANDSCAPE];

/** The one device k6 lists without a landscape twin. */
const NO_LANDSCAPE = "no landscape";

/** k6's devices by the user agent they send. */
const BY_USER_AGENT: readonly (readonly [userAgent: string, devices: readonly UprightDevice[]])[] = [
  [
    "Mozilla/5.0 (PlayBook; U; RIM Tablet OS 2.1.0; en-US) AppleWebKit/536.2+ (KHTML like Gecko) Version/7.2.1.0 Safari/536.2+",
    [["Blackberry PlayBook", 600, 1024, 1]],
  ],
  ["Mozilla/5.0 (BB10; Touch) AppleWebKit/537.10+ (KHTML, like Gecko) Version/10.0.9.2372 Mobile Safari/537.10+", [["BlackBerry Z30", 360, 640, 2]]],
  [
    "Mozilla/5.0 (Linux; U; Android 4.3; en-us; SM-N900T Build/JSS15J) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30",
    [["Galaxy Note 3", 360, 640, 3]],
  ],
  [
    "Mozilla/5.0 (Linux; U; Android 4.1; en-us; GT-N7100 Build/JRO03C) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30",
    [["Galaxy Note II", 360, 640, 2]],
  ],
  [
    "Mozilla/5.0 (Linux; U; Android 4.0; en-us; GT-I9300 Build/IMM76D) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30",
    [["Galaxy S III", 360, 640, 2]],
  ],
  [
    "Mozilla/5.0 (Linux; Android 5.0; SM-G900P Build/LRX21T) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/75.0.3765.0 Mobile Safari/537.36",
    [["Galaxy S5", 360, 640, 3]],
  ],
  [
    "Mozilla/5.0 (iPad; CPU OS 11_0 like Mac OS X) AppleWebKit/604.1.34 (KHTML, like Gecko) Version/11.0 Mobile/15A5341f Safari/604.1",
    [
      ["iPad", 768, 1024, 2],
      ["iPad Mini", 768, 1024, 2],
      ["iPad Pro", 1024, 1366, 2],
    ],
  ],
  [
    "Mozilla/5.0 (iPhone; CPU iPhone OS 7_1_2 like Mac OS X) AppleWebKit/537.51.2 (KHTML, like Gecko) Version/7.0 Mobile/11D257 Safari/9537.53",
    [["iPhone 4", 320, 480, 2]],
  ],
  [
    "Mozilla/5.0 (iPhone; CPU iPhone OS 10_3_1 like Mac OS X) AppleWebKit/603.1.30 (KHTML, like Gecko) Version/10.0 Mobile/14E304 Safari/602.1",
    [
      ["iPhone 5", 320, 568, 2],
      ["iPhone SE", 320, 568, 2],
    ],
  ],
  [
    "Mozilla/5.0 (iPhone; CPU iPhone OS 11_0 like Mac OS X) AppleWebKit/604.1.38 (KHTML, like Gecko) Version/11.0 Mobile/15A372 Safari/604.1",
    [
      ["iPhone 6", 375, 667, 2],
      ["iPhone 6 Plus", 414, 736, 3],
      ["iPhone 7", 375, 667, 2],
      ["iPhone 7 Plus", 414, 736, 3],
      ["iPhone 8", 375, 667, 2],
      ["iPhone 8 Plus", 414, 736, 3],
      ["iPhone X", 375, 812, 3],
    ],
  ],
  [
    "Mozilla/5.0 (iPhone; CPU iPhone OS 12_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.0 Mobile/15E148 Safari/604.1",
    [["iPhone XR", 414, 896, 3]],
  ],
  ["Mozilla/5.0 (Mobile; LYF/F300B/LYF-F300B-001-01-15-130718-i;Android; rv:48.0) Gecko/48.0 Firefox/48.0 KAIOS/2.5", [["JioPhone 2", 240, 320, 1]]],
  [
    "Mozilla/5.0 (Linux; U; en-us; KFAPWI Build/JDQ39) AppleWebKit/535.19 (KHTML, like Gecko) Silk/3.13 Safari/535.19 Silk-Accelerated=true",
    [["Kindle Fire HDX", 800, 1280, 2]],
  ],
  [
    "Mozilla/5.0 (Linux; U; Android 4.4.2; en-us; LGMS323 Build/KOT49I.MS32310c) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/75.0.3765.0 Mobile Safari/537.36",
    [["LG Optimus L70", 384, 640, 1.25]],
  ],
  [
    "Mozilla/5.0 (Windows Phone 10.0; Android 4.2.1; Microsoft; Lumia 550) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/46.0.2486.0 Mobile Safari/537.36 Edge/14.14263",
    [["Microsoft Lumia 550", 640, 360, 2, NO_LANDSCAPE]],
  ],
  [
    "Mozilla/5.0 (Windows Phone 10.0; Android 4.2.1; Microsoft; Lumia 950) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/46.0.2486.0 Mobile Safari/537.36 Edge/14.14263",
    [["Microsoft Lumia 950", 360, 640, 4]],
  ],
  [
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 10 Build/MOB31T) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/75.0.3765.0 Safari/537.36",
    [["Nexus 10", 800, 1280, 2]],
  ],
  [
    "Mozilla/5.0 (Linux; Android 4.4.2; Nexus 4 Build/KOT49H) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/75.0.3765.0 Mobile Safari/537.36",
    [["Nexus 4", 384, 640, 2]],
  ],
  [
    "Mozilla/5.0 (Linux; Android 6.0; Nexus 5 Build/MRA58N) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/75.0.3765.0 Mobile Safari/537.36",
    [["Nexus 5", 360, 640, 3]],
  ],
  [
    "Mozilla/5.0 (Linux; Android 8.0.0; Nexus 5X Build/OPR4.170623.006) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/75.0.3765.0 Mobile Safari/537.36",
    [["Nexus 5X", 412, 732, 2.625]],
  ],
  [
    "Mozilla/5.0 (Linux; Android 7.1.1; Nexus 6 Build/N6F26U) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/75.0.3765.0 Mobile Safari/537.36",
    [["Nexus 6", 412, 732, 3.5]],
  ],
  [
    "Mozilla/5.0 (Linux; Android 8.0.0; Nexus 6P Build/OPP3.170518.006) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/75.0.3765.0 Mobile Safari/537.36",
    [["Nexus 6P", 412, 732, 3.5]],
  ],
  [
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 7 Build/MOB30X) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/75.0.3765.0 Safari/537.36",
    [["Nexus 7", 600, 960, 2]],
  ],
  ["Mozilla/5.0 (compatible; MSIE 10.0; Windows Phone 8.0; Trident/6.0; IEMobile/10.0; ARM; Touch; NOKIA; Lumia 520)", [["Nokia Lumia 520", 320, 533, 1.5]]],
  ["Mozilla/5.0 (MeeGo; NokiaN9) AppleWebKit/534.13 (KHTML, like Gecko) NokiaBrowser/8.5.0 Mobile Safari/534.13", [["Nokia N9", 480, 854, 1]]],
  [
    "Mozilla/5.0 (Linux; Android 8.0; Pixel 2 Build/OPD3.170816.012) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/75.0.3765.0 Mobile Safari/537.36",
    [["Pixel 2", 411, 731, 2.625]],
  ],
  [
    "Mozilla/5.0 (Linux; Android 8.0.0; Pixel 2 XL Build/OPD1.170816.004) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/75.0.3765.0 Mobile Safari/537.36",
    [["Pixel 2 XL", 411, 823, 3.5]],
  ],
];

/**
 * A fresh copy of k6's descriptors, by name (a VU's own, as k6 builds the map for each VU: a
 * script that changes one changes only its own).
 */
export function browserDevices(): Record<string, BrowserDevice> {
  const devices: Record<string, BrowserDevice> = {};
  const add = (name: string, userAgent: string, width: number, height: number, deviceScaleFactor: number) => {
    devices[name] = { name, userAgent, viewport: { width, height }, deviceScaleFactor, isMobile: true, hasTouch: true };
  };
  for (const [userAgent, upright] of BY_USER_AGENT)
    for (const [name, width, height, scale, noLandscape] of upright) {
      add(name, userAgent, width, height, scale);
      if (noLandscape !== NO_LANDSCAPE) add(`${name} landscape`, userAgent, height, width, scale);
    }
  return devices;
}
