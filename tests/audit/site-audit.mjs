// Audits a built site in headless Chromium: Lighthouse scores (mobile and
// desktop), axe-core violations (light and dark theme), the Nu HTML checker's
// errors, and screenshots. Run by tests/publish_audit.rs; usable by hand:
//
//   node tests/audit/site-audit.mjs --site site --modules .local-tools/node/node_modules \
//     --chromium /usr/bin/chromium --lighthouse index.html,results.html \
//     --axe all[,results.html?q=words] --vnu path/to/vnu.jar --screenshots out/ --out report.json
//
// Prints one line per check and writes the figures as JSON; exits 1 when a
// Lighthouse category is under --min-score (default 95), axe reports a
// violation or the Nu checker an error. The site is served by a small static
// server inside this script, on 127.0.0.1 only.
import { createRequire } from "node:module";
import { createServer } from "node:http";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { extname, join, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
const site = resolve(args.site || "site");
const minScore = Number(args["min-score"] || 95);
const requireFrom = createRequire(join(resolve(args.modules || "node_modules"), "noop.js"));
const load = async (name) => import(pathToFileURL(requireFrom.resolve(name)).href);

const TYPES = {
  ".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8",
  ".svg": "image/svg+xml", ".xml": "application/xml", ".json": "application/json", ".png": "image/png",
  ".gz": "application/gzip",
};

function htmlPages(dir, prefix = "") {
  const pages = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) pages.push(...htmlPages(path, prefix + name + "/"));
    else if (name.endsWith(".html")) pages.push(prefix + name);
  }
  return pages;
}

// Every page but the generated run-level ones, of which one of each kind
// (a task's runs, a transcript, a comparison): they share their templates,
// and a site has hundreds of them.
function pagesToAudit(all) {
  const seen = new Set();
  return all.filter((p) => {
    const kind = /^baselines\/[^/]+\/[^/]+\/run-\d+\.html$/.test(p) ? "transcript"
      : /^baselines\/[^/]+\/[^/]+\.html$/.test(p) ? "task"
      : p.startsWith("compare/") ? "pair" : null;
    if (!kind) return true;
    if (seen.has(kind)) return false;
    seen.add(kind);
    return true;
  });
}

function serve() {
  const server = createServer((req, res) => {
    let path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (path.endsWith("/")) path += "index.html";
    const file = resolve(join(site, path));
    if (!file.startsWith(site + sep) || !existsSync(file) || statSync(file).isDirectory()) {
      res.writeHead(404, { "content-type": TYPES[".html"] });
      res.end(existsSync(join(site, "404.html")) ? readFileSync(join(site, "404.html")) : "not found");
      return;
    }
    res.writeHead(200, { "content-type": TYPES[extname(file)] || "application/octet-stream" });
    res.end(readFileSync(file));
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => ok(server)));
}

const report = { lighthouse: [], axe: [], vnu: null, screenshots: [] };
let failed = false;
const server = await serve();
const base = `http://127.0.0.1:${server.address().port}/`;

try {
  if (args.lighthouse) {
    const { default: lighthouse } = await load("lighthouse");
    const desktop = (await load("lighthouse/core/config/desktop-config.js")).default;
    const chromeLauncher = await load("chrome-launcher");
    const chrome = await chromeLauncher.launch({
      chromePath: args.chromium,
      chromeFlags: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    });
    try {
      for (const page of args.lighthouse.split(",")) {
        for (const [formFactor, config] of [["mobile", undefined], ["desktop", desktop]]) {
          // Performance under simulated throttling varies with the machine's
          // load: a page under the bar is measured twice more and the median
          // of the three runs counts, as Lighthouse's docs advise.
          const runs = [];
          let result;
          for (let run = 0; run < 3; run++) {
            result = await lighthouse(base + page, { port: chrome.port, output: "json", logLevel: "error" }, config);
            const s = {};
            for (const [id, category] of Object.entries(result.lhr.categories)) s[id] = Math.round(category.score * 100);
            runs.push(s);
            if (run === 0 && Object.values(s).every((v) => v >= minScore)) break;
          }
          const scores = {};
          for (const id of Object.keys(runs[0])) {
            const sorted = runs.map((r) => r[id]).sort((a, b) => a - b);
            scores[id] = sorted[Math.floor(sorted.length / 2)];
          }
          const low = Object.entries(scores).filter(([, s]) => s < minScore);
          const failing = Object.values(result.lhr.audits)
            .filter((a) => a.score !== null && a.score < 1 && a.scoreDisplayMode !== "informative" && a.scoreDisplayMode !== "notApplicable" && a.scoreDisplayMode !== "manual")
            .map((a) => a.id);
          report.lighthouse.push({ page, formFactor, scores, runs: runs.length, failing });
          console.log(`lighthouse ${formFactor.padEnd(7)} ${page.padEnd(40)} ${Object.entries(scores).map(([k, v]) => `${k} ${v}`).join(", ")}` + (runs.length > 1 ? ` (median of ${runs.length} runs)` : "") + (low.length ? `  BELOW ${minScore}; audits not passed: ${failing.join(", ")}` : ""));
          if (low.length) failed = true;
        }
      }
    } finally {
      await chrome.kill();
    }
  }

  if (args.axe || args.screenshots) {
    const puppeteer = (await load("puppeteer-core")).default;
    const browser = await puppeteer.launch({
      executablePath: args.chromium,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    });
    try {
      if (args.axe) {
        const axeSource = readFileSync(requireFrom.resolve("axe-core/axe.min.js"), "utf8");
        // `all` is every page (but the run-level ones, one of each kind);
        // other entries are pages as given, with a query if any
        // (`results.html?q=flash`: the page with its search open).
        const pages = args.axe.split(",").flatMap((spec) => (spec === "all" ? pagesToAudit(htmlPages(site)) : [spec]));
        for (const theme of ["light", "dark"]) {
          for (const pagePath of pages) {
            const page = await browser.newPage();
            await page.setViewport({ width: 1280, height: 900 });
            await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: theme }]);
            await page.goto(base + pagePath, { waitUntil: "load" });
            if (pagePath.includes("?q=")) {
              await page.waitForSelector("#search-results:not([hidden]) a", { timeout: 10000 });
            }
            await page.evaluate(axeSource);
            const result = await page.evaluate(async () => {
              const r = await window.axe.run(document, { resultTypes: ["violations"] });
              return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
            });
            report.axe.push({ page: pagePath, theme, violations: result });
            if (result.length) {
              failed = true;
              console.log(`axe ${theme.padEnd(5)} ${pagePath}: ${result.length} violation(s): ${result.map((v) => `${v.id} (${v.help}) at ${v.nodes.join("; ")}`).join(" | ")}`);
            }
            await page.close();
          }
        }
        const total = report.axe.reduce((n, r) => n + r.violations.length, 0);
        console.log(`axe: ${total} violations on ${pages.length} pages, light and dark`);
      }
      if (args.screenshots) {
        mkdirSync(args.screenshots, { recursive: true });
        for (const spec of (args["screenshot-pages"] || "index.html").split(",")) {
          for (const width of [1280, 390]) {
            for (const theme of ["light", "dark"]) {
              const page = await browser.newPage();
              await page.setViewport({ width, height: width === 390 ? 844 : 900, deviceScaleFactor: 1 });
              await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: theme }]);
              await page.goto(base + spec, { waitUntil: "load" });
              const name = `${spec.replace(/[/.]/g, "_")}-${width}-${theme}.png`;
              await page.screenshot({ path: join(args.screenshots, name), fullPage: args["full-page"] === "yes" });
              report.screenshots.push(name);
              await page.close();
            }
          }
        }
        console.log(`screenshots: ${report.screenshots.length} in ${args.screenshots}`);
      }
    } finally {
      await browser.close();
    }
  }

  if (args.vnu) {
    const dirs = [site, ...(args["vnu-also"] ? args["vnu-also"].split(",") : [])];
    let output = "";
    try {
      output = execFileSync("java", ["-jar", args.vnu, "--errors-only", "--format", "json", "--skip-non-html", ...dirs], { stdio: ["ignore", "pipe", "pipe"] }).toString();
    } catch (e) {
      output = (e.stderr || "").toString() + (e.stdout || "").toString();
    }
    let messages = [];
    try {
      messages = JSON.parse(output.slice(output.indexOf("{"))).messages || [];
    } catch {
      messages = output.trim() ? [{ type: "error", message: output.trim() }] : [];
    }
    const errors = messages.filter((m) => m.type === "error");
    const files = dirs.flatMap((d) => htmlPages(d)).length;
    report.vnu = { files, errors };
    console.log(`nu html checker: ${errors.length} errors in ${files} pages`);
    for (const e of errors.slice(0, 20)) console.log(`  ${e.url}:${e.lastLine}: ${e.message}`);
    if (errors.length) failed = true;
  }
} finally {
  server.close();
}

if (args.out) writeFileSync(args.out, JSON.stringify(report, null, 2));
process.exit(failed ? 1 : 0);
