// Bundle src/index.ts into ../jupyter_brain/static/agent_view.js and src/compare/index.ts
// into compare_view.js (ES modules whose default export is the anywidget factory), each
// with its .css; src/turn_view.ts into ../js/lab/view/turn_view.js (+ .css), the finished
// turn's renderer that the JupyterLab extension bundles (js/lab/src/turn_renderer.ts), and
// src/compare_bundle.ts into ../js/lab/view/compare_bundle.js (+ .css), the finished
// comparison's (js/lab/src/compare_renderer.ts).
// `npm run build` runs type generation and `tsc --noEmit` first; `--watch` rebuilds.
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = resolve(here, "..", "jupyter_brain", "static");
mkdirSync(outdir, { recursive: true });

const options = {
  entryPoints: {
    agent_view: resolve(here, "src", "index.ts"),
    compare_view: resolve(here, "src", "compare", "index.ts"),
  },
  outdir,
  bundle: true,
  format: "esm",
  target: ["es2020", "chrome100", "firefox100", "safari15"],
  minify: !process.argv.includes("--dev"),
  sourcemap: false,
  legalComments: "eof",
  logLevel: "info",
};

// For the lab extension's webpack: unminified, so its build and source maps stay readable.
const labView = {
  ...options,
  entryPoints: {
    turn_view: resolve(here, "src", "turn_view.ts"),
    compare_bundle: resolve(here, "src", "compare_bundle.ts"),
  },
  outdir: resolve(here, "lab", "view"),
  minify: false,
  splitting: true, // the two share the renderer: one chunk, not two copies in the extension
};

if (process.argv.includes("--watch")) {
  const ctx = await esbuild.context({ ...options, minify: false });
  await ctx.watch();
} else {
  await esbuild.build(options);
  await esbuild.build(labView);
}
