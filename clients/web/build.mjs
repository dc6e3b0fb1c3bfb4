// Builds what `make install` and the tests use, with esbuild (no type check here:
// `npm run typecheck` is tsc's, run by the pytest wrapper of the unit tests):
//   dist/page/   the web table page: app.js (one bundle for the browser), index.html, style.css
//   dist/test/   the unit tests, one ES module each, for `node --test`
import { build } from "esbuild";
import { cpSync, mkdirSync, readdirSync, rmSync } from "node:fs";

rmSync("dist", { recursive: true, force: true });
mkdirSync("dist/page", { recursive: true });

await build({
  entryPoints: ["src/page/main.ts"],
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["chrome110", "firefox110", "safari16"],
  minify: true,
  sourcemap: true,
  outfile: "dist/page/app.js",
  logLevel: "warning",
});
for (const file of readdirSync("static")) {
  cpSync(`static/${file}`, `dist/page/${file}`);
}

const tests = readdirSync("test").filter((f) => f.endsWith(".test.ts"));
await build({
  entryPoints: tests.map((f) => `test/${f}`),
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  sourcemap: "inline",
  outdir: "dist/test",
  outExtension: { ".js": ".mjs" },
  logLevel: "warning",
});
