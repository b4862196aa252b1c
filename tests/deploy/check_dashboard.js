// check_dashboard.js [--dashboard FILE] [--expect-unknown METRIC]: the CTest tests
// deploy.dashboard and deploy.dashboard_broken. Loads the Grafana dashboard (default
// deploy/grafana/boardkeeper.json) and checks that it imports as is (the data source is the
// dashboard variable `datasource`, every panel and target uses it, ids are unique) and that
// every panel's expressions name only metrics boardkeeper exposes: every boardkeeper_* and
// process_* name in src/ (a histogram's with _bucket/_sum/_count), as for the alert rules
// (check_k8s.js), and only label names the program gives them (or job, instance, le) in
// by (...), matchers and legends. Exit 1 naming each problem.
// --expect-unknown METRIC: the check of the checker: a copy of the dashboard with METRIC put
// into its first expression must fail naming METRIC (exit 0 when it does).
"use strict";

const fs = require("fs");
const os = require("os");
const path = require("path");

const root = path.resolve(__dirname, "../..");

function parseArgs(argv) {
  const a = { dashboard: path.join(root, "deploy/grafana/boardkeeper.json") };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!["dashboard", "expect-unknown"].includes(key) || argv[i + 1] === undefined) {
      console.error(`check_dashboard.js: unknown or incomplete option ${argv[i]}`);
      process.exit(2);
    }
    a[key] = argv[i + 1];
  }
  return a;
}

// Every metric name the program exposes, from the sources (as check_k8s.js reads them).
function exposedMetrics() {
  const known = new Set();
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const f = path.join(d, e.name);
      if (e.isDirectory()) walk(f);
      else if (/\.(cpp|h)$/.test(e.name)) {
        for (const m of fs.readFileSync(f, "utf8").matchAll(/"((?:boardkeeper|process)_[a-z0-9_]+)"/g)) {
          for (const suffix of ["", "_bucket", "_sum", "_count"]) known.add(m[1] + suffix);
        }
      }
    }
  };
  walk(path.join(root, "src"));
  return known;
}

// Every label name the program gives its metrics (`{{"route", route}, {"code", ...}}` in
// src/), and those Prometheus adds (job, instance; le on a histogram's buckets).
function exposedLabels() {
  const known = new Set(["job", "instance", "le", "__name__"]);
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const f = path.join(d, e.name);
      if (e.isDirectory()) walk(f);
      else if (/\.(cpp|h)$/.test(e.name)) {
        for (const m of fs.readFileSync(f, "utf8").matchAll(/\{\{?"([a-z_]+)", /g)) known.add(m[1]);
      }
    }
  };
  walk(path.join(root, "src"));
  return known;
}

// The label names an expression uses: in by/without/on/ignoring lists and in matchers.
function labelsOf(expr) {
  const out = [];
  for (const m of expr.matchAll(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g)) {
    out.push(...m[1].split(",").map((l) => l.trim()).filter(Boolean));
  }
  for (const m of expr.matchAll(/\{([^}]*)\}/g)) {
    for (const mm of m[1].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)) out.push(mm[1]);
  }
  return out;
}

// Panels, also those nested in collapsed rows.
function allPanels(panels) {
  return (panels || []).flatMap((p) => [p, ...allPanels(p.panels)]);
}

function check(file) {
  const problems = [];
  let d;
  try {
    d = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    return { problems: [`${file}: not JSON: ${e.message}`], panels: 0, exprs: 0 };
  }
  const known = exposedMetrics();
  const labels = exposedLabels();
  const vars = (d.templating && d.templating.list) || [];
  const ds = vars.find((v) => v.name === "datasource");
  if (!ds || ds.type !== "datasource" || ds.query !== "prometheus") {
    problems.push("the dashboard needs the variable `datasource` (type datasource, query prometheus)");
  }
  if (d.__inputs && d.__inputs.length) problems.push("__inputs: the data source is the variable, not an import input");
  if (!d.title || !d.uid) problems.push("the dashboard needs a title and a uid");
  const ids = new Set();
  let exprs = 0;
  const panels = allPanels(d.panels);
  for (const p of panels) {
    const where = `panel ${p.id} '${p.title}'`;
    if (ids.has(p.id)) problems.push(`${where}: id ${p.id} is used twice`);
    ids.add(p.id);
    if (!p.gridPos) problems.push(`${where}: no gridPos`);
    if (p.type === "row") continue;
    if (!p.datasource || p.datasource.uid !== "${datasource}") problems.push(`${where}: its datasource is not \${datasource}`);
    if (!p.targets || p.targets.length === 0) problems.push(`${where}: no query`);
    for (const t of p.targets || []) {
      const tw = `${where} query ${t.refId}`;
      if (!t.datasource || t.datasource.uid !== "${datasource}") problems.push(`${tw}: its datasource is not \${datasource}`);
      if (typeof t.expr !== "string" || !t.expr.trim()) {
        problems.push(`${tw}: no expr`);
        continue;
      }
      ++exprs;
      // Names inside label matchers' values ("...") are not metrics: drop quoted text first.
      const bare = t.expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
      for (const m of bare.matchAll(/\b(?:boardkeeper|process)_[a-z0-9_]+/g)) {
        if (!known.has(m[0])) problems.push(`${tw}: uses ${m[0]}, which boardkeeper does not expose`);
      }
      if (!/\b(?:boardkeeper|process)_[a-z0-9_]+/.test(bare)) problems.push(`${tw}: names no boardkeeper metric`);
      const used = [...labelsOf(t.expr), ...[...String(t.legendFormat || "").matchAll(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g)].map((m) => m[1])];
      for (const l of used) {
        if (!labels.has(l)) problems.push(`${tw}: uses the label ${l}, which no boardkeeper metric has`);
      }
      let depth = 0;
      for (const ch of bare) {
        depth += ch === "(" ? 1 : ch === ")" ? -1 : 0;
        if (depth < 0) break;
      }
      if (depth !== 0) problems.push(`${tw}: unbalanced parentheses`);
    }
  }
  return { problems, panels: panels.filter((p) => p.type !== "row").length, exprs };
}

function main() {
  const args = parseArgs(process.argv);
  if (args["expect-unknown"]) {
    const metric = args["expect-unknown"];
    const d = JSON.parse(fs.readFileSync(args.dashboard, "utf8"));
    const first = allPanels(d.panels).find((p) => p.targets && p.targets.length);
    first.targets[0].expr = `sum(rate(${metric}[5m]))`;
    const copy = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bk-dashboard-")), "broken.json");
    fs.writeFileSync(copy, JSON.stringify(d, null, 2));
    const { problems } = check(copy);
    fs.rmSync(path.dirname(copy), { recursive: true, force: true });
    for (const p of problems) console.log(`the broken copy: ${p}`);
    const named = problems.some((p) => p.includes(`uses ${metric}, which boardkeeper does not expose`));
    if (!named) {
      console.error(`FAIL: a copy using ${metric} passed the check (or failed without naming it)`);
      process.exit(1);
    }
    console.log(`ok: a copy of the dashboard using ${metric} fails, naming it`);
    return;
  }
  const { problems, panels, exprs } = check(args.dashboard);
  if (problems.length) {
    for (const p of problems) console.error(`FAIL ${args.dashboard}: ${p}`);
    process.exit(1);
  }
  console.log(`${args.dashboard}: ${panels} panels, ${exprs} expressions, every metric exposed`);
}

main();
