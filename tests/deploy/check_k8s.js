#!/usr/bin/env node
// Offline checks of the kustomize base deploy/k8s, without a cluster:
//   1. render it the way `kubectl kustomize` does (resources + configMapGenerator with the
//      content-hash name suffix and the references to it rewritten); when kubectl is on
//      PATH, its rendering must be the same objects;
//   2. validate every object against the Kubernetes API schemas (kubernetes-models: types,
//      required fields, enums, formats such as quantities) and, like the API server's strict
//      field validation, refuse unknown fields (a TypeScript check of the same models);
//   3. check what boardkeeper needs from them: every ConfigMap reference resolves, the
//      Secret is the operator's (named, never defined here), migrate runs first in every
//      pod, app.kubernetes.io labels everywhere, PDBs and spreads for the Deployments,
//      --config points at a mounted key, boardkeeper's global flags come before the command,
//      the security context, resources, probes and the CronJob's policies;
//   4. run `boardkeeper check-config` on the config the pods get, with the Secret's URLs.
//
// node check_k8s.js --base DIR --binary BOARDKEEPER --work DIR --modules NODE_MODULES_DIR
"use strict";

const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const childProcess = require("child_process");

function parseArgs(argv) {
  const args = {};
  for (let i = 2; i < argv.length; i += 2) {
    if (!argv[i].startsWith("--") || i + 1 >= argv.length) usage();
    args[argv[i].slice(2)] = argv[i + 1];
  }
  for (const k of ["base", "binary", "work", "modules"]) if (!args[k]) usage();
  return args;
}

function usage() {
  console.error("usage: check_k8s.js --base DIR --binary FILE --work DIR --modules DIR");
  process.exit(2);
}

const args = parseArgs(process.argv);
const modules = path.resolve(args.modules);
const need = (name) => require(require.resolve(name, { paths: [modules] }));
const YAML = need("yaml");
const ts = need("typescript");

const errors = [];
const fail = (where, msg) => errors.push(`${where}: ${msg}`);

// ---------------------------------------------------------------------------------------
// 1. Rendering.

// sigs.k8s.io/yaml reads YAML 1.1 (yes/no/on/off are booleans there): parse the same way.
function parseYamlDocs(file) {
  const text = fs.readFileSync(file, "utf8");
  const docs = YAML.parseAllDocuments(text, { version: "1.1", uniqueKeys: true, prettyErrors: true });
  const out = [];
  for (const doc of docs) {
    for (const e of [...doc.errors, ...doc.warnings]) fail(file, e.message);
    const value = doc.toJS({ maxAliasCount: 0 });
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

// kustomize's generator hash (api/hasher): sha256 of the Go JSON encoding of
// {data, kind, name}, where kustomize v5 passes an empty name, first 10 hex digits with
// 0 1 3 a e mapped to g h k m t.
function goJson(value) {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"),
  );
}
function configMapHash(data) {
  const hex = crypto
    .createHash("sha256")
    .update(goJson({ data, kind: "ConfigMap", name: "" }))
    .digest("hex");
  const map = { 0: "g", 1: "h", 3: "k", a: "m", e: "t" };
  return hex.slice(0, 10).replace(/[013ae]/g, (c) => map[c]);
}

// The pod specs of the workloads this base may contain.
function podSpecs(obj) {
  switch (obj.kind) {
    case "Deployment":
    case "StatefulSet":
    case "DaemonSet":
    case "Job":
      return [obj.spec?.template?.spec].filter(Boolean);
    case "CronJob":
      return [obj.spec?.jobTemplate?.spec?.template?.spec].filter(Boolean);
    case "Pod":
      return [obj.spec].filter(Boolean);
    default:
      return [];
  }
}
const containersOf = (spec) => [...(spec.initContainers || []), ...(spec.containers || [])];

// Every place a pod spec names a ConfigMap or Secret: calls visit(kind, holder, key, optional).
function forEachReference(spec, visit) {
  for (const v of spec.volumes || []) {
    if (v.configMap) visit("ConfigMap", v.configMap, "name", v.configMap.optional);
    if (v.secret) visit("Secret", v.secret, "secretName", v.secret.optional);
    for (const s of v.projected?.sources || []) {
      if (s.configMap) visit("ConfigMap", s.configMap, "name", s.configMap.optional);
      if (s.secret) visit("Secret", s.secret, "name", s.secret.optional);
    }
  }
  for (const c of containersOf(spec)) {
    for (const e of c.envFrom || []) {
      if (e.configMapRef) visit("ConfigMap", e.configMapRef, "name", e.configMapRef.optional);
      if (e.secretRef) visit("Secret", e.secretRef, "name", e.secretRef.optional);
    }
    for (const e of c.env || []) {
      const r = e.valueFrom || {};
      if (r.configMapKeyRef) visit("ConfigMap", r.configMapKeyRef, "name", r.configMapKeyRef.optional);
      if (r.secretKeyRef) visit("Secret", r.secretKeyRef, "name", r.secretKeyRef.optional);
    }
  }
  for (const s of spec.imagePullSecrets || []) visit("Secret", s, "name", false);
}

function render(base) {
  const kfile = path.join(base, "kustomization.yaml");
  const [k] = parseYamlDocs(kfile);
  if (!k) throw new Error(`${kfile}: empty`);
  const supported = ["apiVersion", "kind", "resources", "configMapGenerator"];
  for (const key of Object.keys(k)) {
    if (!supported.includes(key)) {
      fail(kfile, `'${key}' is not rendered by tests/deploy/check_k8s.js (it knows ${supported.join(", ")})`);
    }
  }
  if (k.apiVersion !== "kustomize.config.k8s.io/v1beta1" || k.kind !== "Kustomization") {
    fail(kfile, "apiVersion/kind must be kustomize.config.k8s.io/v1beta1 Kustomization");
  }

  const objects = [];
  const used = new Set(["kustomization.yaml"]);
  for (const r of k.resources || []) {
    const file = path.join(base, r);
    if (path.dirname(path.normalize(r)) !== "." || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      fail(kfile, `resource '${r}' is not a file of this directory`);
      continue;
    }
    if (used.has(r)) fail(kfile, `resource '${r}' is listed twice`);
    used.add(r);
    for (const obj of parseYamlDocs(file)) objects.push({ obj, source: r });
  }

  const renames = { ConfigMap: new Map(), Secret: new Map() };
  for (const g of k.configMapGenerator || []) {
    for (const key of Object.keys(g)) {
      if (!["name", "files", "literals", "options"].includes(key)) {
        fail(kfile, `configMapGenerator '${key}' is not rendered by tests/deploy/check_k8s.js`);
      }
    }
    for (const key of Object.keys(g.options || {})) {
      if (key !== "labels") fail(kfile, `configMapGenerator options.${key} is not rendered by tests/deploy/check_k8s.js`);
    }
    const data = {};
    for (const f of g.files || []) {
      const [key, rel] = f.includes("=") ? f.split(/=(.*)/s) : [path.basename(f), f];
      const file = path.join(base, rel);
      if (path.dirname(path.normalize(rel)) !== "." || !fs.existsSync(file)) {
        fail(kfile, `configMapGenerator file '${rel}' is not a file of this directory`);
        continue;
      }
      used.add(rel);
      data[key] = fs.readFileSync(file, "utf8");
    }
    for (const l of g.literals || []) {
      const [key, value] = l.split(/=(.*)/s);
      data[key] = value;
    }
    const name = `${g.name}-${configMapHash(data)}`;
    renames.ConfigMap.set(g.name, name);
    const metadata = { name };
    if (g.options?.labels) metadata.labels = { ...g.options.labels };
    objects.push({ obj: { apiVersion: "v1", kind: "ConfigMap", metadata, data }, source: "configMapGenerator" });
  }

  // Every YAML file here must be used, or kubectl apply -k would silently leave it out.
  for (const f of fs.readdirSync(base)) {
    if (/\.ya?ml$/.test(f) && !used.has(f)) {
      fail(kfile, `${f} is in ${base} but neither a resource nor a generator input`);
    }
  }

  for (const { obj } of objects) {
    for (const spec of podSpecs(obj)) {
      forEachReference(spec, (kind, holder, key) => {
        const to = renames[kind].get(holder[key]);
        if (to) holder[key] = to;
      });
    }
  }
  return objects;
}

const keyOf = (o) => `${o.kind}/${o.metadata?.name}`;

function crossCheckWithKubectl(base, objects) {
  const which = childProcess.spawnSync("sh", ["-c", "command -v kubectl"], { encoding: "utf8" });
  if (which.status !== 0) {
    console.log("kubectl not on PATH: rendering not cross-checked against kubectl kustomize");
    return;
  }
  // Kustomize before v5 (e.g. the kubectl of Debian 12's kubernetes-client) hashes names
  // differently: compare only with v5 and later.
  const v = childProcess.spawnSync("kubectl", ["version", "--client", "-o", "json"], { encoding: "utf8" });
  let kustomize = "";
  try {
    kustomize = JSON.parse(v.stdout).kustomizeVersion || "";
  } catch (e) {
    kustomize = "";
  }
  const major = Number((/^v(\d+)\./.exec(kustomize) || [])[1]);
  if (!(major >= 5)) {
    console.log(`kubectl's kustomize is '${kustomize}', not v5 or later: rendering not cross-checked`);
    return;
  }
  const r = childProcess.spawnSync("kubectl", ["kustomize", base], { encoding: "utf8" });
  if (r.status !== 0) {
    fail("kubectl kustomize", r.stderr.trim() || `exit ${r.status}`);
    return;
  }
  const theirs = new Map();
  for (const doc of YAML.parseAllDocuments(r.stdout, { version: "1.1" })) {
    const o = doc.toJS();
    if (o) theirs.set(keyOf(o), o);
  }
  const ours = new Map(objects.map(({ obj }) => [keyOf(obj), obj]));
  const canon = (v) => goJson(sortKeys(v));
  for (const [key, o] of ours) {
    if (!theirs.has(key)) fail("kubectl kustomize", `does not render ${key}`);
    else if (canon(theirs.get(key)) !== canon(o)) fail("kubectl kustomize", `renders ${key} differently`);
  }
  for (const key of theirs.keys()) if (!ours.has(key)) fail("kubectl kustomize", `also renders ${key}`);
  console.log(`kubectl kustomize (${kustomize}): the same ${theirs.size} objects`);
}

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
  }
  return v;
}

// ---------------------------------------------------------------------------------------
// 2. Kubernetes API schemas.

// apiVersion + kind -> module of kubernetes-models (core group "v1" lives in v1/).
function modelModule(obj) {
  if (typeof obj.apiVersion !== "string" || typeof obj.kind !== "string") return null;
  const [group, version] = obj.apiVersion.includes("/") ? obj.apiVersion.split("/") : [null, obj.apiVersion];
  return `kubernetes-models/${group ? `${group}/${version}` : version}/${obj.kind}`;
}

function validateSchemas(objects, work) {
  const typed = [];
  objects.forEach(({ obj, source }, i) => {
    const where = `${source}: ${keyOf(obj)}`;
    const mod = modelModule(obj);
    let Model;
    try {
      Model = mod && need(mod)[obj.kind];
    } catch (e) {
      Model = undefined;
    }
    if (!Model) {
      fail(where, `unknown apiVersion/kind ${obj.apiVersion} ${obj.kind}`);
      return;
    }
    try {
      new Model(obj).validate();
    } catch (e) {
      fail(where, `schema: ${e.message}`);
    }
    typed.push({ i, where, mod, obj });
  });

  // Unknown fields: the models' declarations, checked as object literals (TypeScript's
  // excess property check), also catch a wrong type or a misspelt enum value.
  const lines = ["// Generated by tests/deploy/check_k8s.js: every rendered object, typed."];
  const owner = [];
  for (const t of typed) {
    const iface = `I${t.obj.kind}`;
    lines.push(`import type { ${iface} as T${t.i} } from ${JSON.stringify(t.mod)};`);
  }
  for (const t of typed) {
    const body = JSON.stringify(t.obj, null, 2).split("\n");
    const first = lines.length;
    lines.push(`export const o${t.i}: T${t.i} = ${body[0]}`, ...body.slice(1));
    lines[lines.length - 1] += ";";
    owner.push({ from: first, to: lines.length - 1, where: t.where });
  }
  const file = path.join(work, "rendered.ts");
  fs.writeFileSync(file, lines.join("\n") + "\n");
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    typeRoots: [],
    paths: { "*": [path.join(modules, "*")] },
  });
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const msg = ts.flattenDiagnosticMessageText(d.messageText, "\n");
    if (!d.file) {
      fail("typescript", msg);
      continue;
    }
    const { line } = d.file.getLineAndCharacterOfPosition(d.start);
    const o = owner.find((x) => line >= x.from && line <= x.to);
    fail(o ? o.where : file, `${msg}\n    at ${file}:${line + 1}: ${lines[line].trim()}`);
  }
}

// ---------------------------------------------------------------------------------------
// 3. What boardkeeper needs from the objects.

const COMMANDS = ["migrate", "check-config", "add", "top", "rank", "around", "periods", "tick", "ingest", "history", "serve"];
const GLOBAL_OPTIONS = ["--config", "--now", "--log-level", "--log-format"];

// Splits boardkeeper's argv into global options and the command; null if malformed.
function splitArgs(argv) {
  const globals = {};
  let i = 0;
  while (i < argv.length && argv[i].startsWith("-")) {
    const [flag, inline] = argv[i].split(/=(.*)/s);
    if (!GLOBAL_OPTIONS.includes(flag)) return null;
    if (inline !== undefined) globals[flag] = inline;
    else globals[flag] = argv[++i];
    i++;
  }
  if (i >= argv.length || !COMMANDS.includes(argv[i])) return null;
  return { globals, command: argv[i], rest: argv.slice(i + 1) };
}

// The Secret the operator creates (kubectl create secret, docs/operations.md): the base refers to it by
// name and must never define it (kubectl apply -k would overwrite the real one). For the
// checks below it stands in with loopback URLs.
const EXTERNAL_SECRET = "boardkeeper-urls";
const STAND_IN_URLS = {
  BOARDKEEPER_REDIS_URL: "redis://:stand-in@127.0.0.1:6379/0",
  BOARDKEEPER_POSTGRES_URL: "postgresql://boardkeeper:stand-in@127.0.0.1:5432/boards",
};

// app.kubernetes.io labels on every object and pod template; the version is the image tag.
const LABELS = ["name", "instance", "version", "component", "part-of"].map((l) => `app.kubernetes.io/${l}`);
function checkLabels(objects) {
  const tags = new Set();
  for (const { obj } of objects) {
    for (const spec of podSpecs(obj)) for (const c of containersOf(spec)) tags.add(String(c.image).split(":")[1]);
  }
  if (tags.size !== 1) fail("deploy/k8s", `every container should run one image tag, not ${[...tags].join(", ")}`);
  const [tag] = [...tags];
  for (const { obj, source } of objects) {
    const where = `${source}: ${keyOf(obj)}`;
    const templates = [obj.metadata];
    if (obj.kind === "Deployment") templates.push(obj.spec.template.metadata);
    if (obj.kind === "CronJob") templates.push(obj.spec.jobTemplate.metadata, obj.spec.jobTemplate.spec.template.metadata);
    for (const m of templates) {
      const labels = m?.labels || {};
      for (const l of LABELS) if (!labels[l]) fail(where, `needs the label ${l}`);
      if (labels["app.kubernetes.io/version"] !== undefined && labels["app.kubernetes.io/version"] !== tag) {
        fail(where, `label app.kubernetes.io/version ${labels["app.kubernetes.io/version"]} is not the image tag ${tag}`);
      }
      if (labels["app.kubernetes.io/part-of"] !== undefined && labels["app.kubernetes.io/part-of"] !== "boardkeeper") {
        fail(where, "label app.kubernetes.io/part-of must be boardkeeper");
      }
    }
  }
}

const selects = (selector, labels) =>
  Object.keys(selector || {}).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

// Long-running pods: a PodDisruptionBudget and a spread over nodes and zones.
function checkAvailability(objects) {
  const pdbs = objects.filter(({ obj }) => obj.kind === "PodDisruptionBudget").map(({ obj }) => obj);
  for (const { obj, source } of objects) {
    if (obj.kind !== "Deployment") continue;
    const where = `${source}: ${keyOf(obj)}`;
    const labels = obj.spec.template.metadata?.labels || {};
    if (!selects(obj.spec.selector?.matchLabels, labels)) fail(where, "its selector does not select its own pods");
    const pdb = pdbs.filter((p) => selects(p.spec?.selector?.matchLabels, labels));
    if (pdb.length !== 1) fail(where, `needs exactly one PodDisruptionBudget selecting its pods, has ${pdb.length}`);
    for (const p of pdb) {
      if (p.spec.maxUnavailable === undefined && p.spec.minAvailable === undefined) fail(where, "its PDB allows nothing");
      if (p.spec.minAvailable !== undefined && p.spec.minAvailable >= obj.spec.replicas) {
        fail(where, "its PDB's minAvailable blocks every drain at this replica count");
      }
    }
    const spread = obj.spec.template.spec.topologySpreadConstraints || [];
    for (const key of ["kubernetes.io/hostname", "topology.kubernetes.io/zone"]) {
      const c = spread.find((t) => t.topologyKey === key);
      if (!c) fail(where, `needs a topologySpreadConstraint over ${key}`);
      else if (!selects(c.labelSelector?.matchLabels, labels)) fail(where, `its spread over ${key} does not select its pods`);
    }
  }
  for (const p of pdbs) {
    if (!objects.some(({ obj }) => obj.kind === "Deployment" && selects(p.spec?.selector?.matchLabels, obj.spec.template.metadata?.labels || {}))) {
      fail(`PodDisruptionBudget/${p.metadata.name}`, "selects no Deployment's pods");
    }
  }
}

function checkWorkloads(objects) {
  const byKey = new Map(objects.map(({ obj }) => [keyOf(obj), obj]));
  for (const { obj, source } of objects) {
    if (obj.kind === "Secret") {
      fail(`${source}: ${keyOf(obj)}`, "the base must not define a Secret: applying it would overwrite the operator's");
    }
  }
  const runs = [];
  for (const { obj, source } of objects) {
    const where = `${source}: ${keyOf(obj)}`;
    for (const spec of podSpecs(obj)) {
      forEachReference(spec, (kind, holder, key, optional) => {
        if (kind === "Secret" && holder[key] === EXTERNAL_SECRET) return;
        if (!optional && !byKey.has(`${kind}/${holder[key]}`)) {
          fail(where, `refers to ${kind} '${holder[key]}', which the base does not define`);
        }
      });
      // The schema first: every workload's pods begin with `boardkeeper migrate`.
      const first = (spec.initContainers || [])[0];
      if (!first || !(first.args || []).includes("migrate")) {
        fail(where, "its pods must run `boardkeeper migrate` as their first init container");
      }
      const psc = spec.securityContext || {};
      if (psc.runAsNonRoot !== true) fail(where, "pod securityContext.runAsNonRoot must be true");
      if (!(psc.runAsUser > 0)) fail(where, "pod securityContext.runAsUser must be a non-root uid");
      if (spec.automountServiceAccountToken !== false) {
        fail(where, "automountServiceAccountToken must be false (boardkeeper never calls the API)");
      }
      for (const c of containersOf(spec)) {
        const cw = `${where} container ${c.name}`;
        const sc = c.securityContext || {};
        if (sc.readOnlyRootFilesystem !== true) fail(cw, "securityContext.readOnlyRootFilesystem must be true");
        if (sc.allowPrivilegeEscalation !== false) fail(cw, "securityContext.allowPrivilegeEscalation must be false");
        if (!(sc.capabilities?.drop || []).includes("ALL")) fail(cw, "securityContext.capabilities.drop must include ALL");
        if (!c.resources?.requests?.memory || !c.resources?.requests?.cpu) fail(cw, "needs cpu and memory requests");
        if (!c.resources?.limits?.memory) fail(cw, "needs a memory limit");
        if (c.command) fail(cw, "must not override the image's ENTRYPOINT (boardkeeper): use args");
        const parsed = splitArgs(c.args || []);
        if (!parsed) {
          fail(cw, `args ${JSON.stringify(c.args)}: want boardkeeper's global options, then one command`);
          continue;
        }
        runs.push({ where: cw, obj, spec, container: c, ...parsed });
      }
    }
  }
  return { byKey, runs };
}

// The ConfigMap key that a path in a container resolves to, through its volume mounts.
function mountedKey(spec, container, file, byKey) {
  for (const m of container.volumeMounts || []) {
    const dir = m.mountPath.replace(/\/$/, "");
    if (!file.startsWith(dir + "/")) continue;
    const rel = file.slice(dir.length + 1);
    const vol = (spec.volumes || []).find((v) => v.name === m.name);
    if (!vol?.configMap) return { error: `volume '${m.name}' is not a ConfigMap volume` };
    const cm = byKey.get(`ConfigMap/${vol.configMap.name}`);
    if (!cm) return { error: `ConfigMap '${vol.configMap.name}' is not defined` };
    const key = m.subPath ? m.subPath : rel;
    if (m.subPath && rel !== "") return { error: `${file} is below a subPath mount` };
    if (!(key in (cm.data || {}))) return { error: `ConfigMap ${cm.metadata.name} has no key '${key}'` };
    return { configMap: cm, key };
  }
  return { error: `${file} is not on any volume mount` };
}

function secretEnv(spec, container, byKey) {
  const env = {};
  for (const e of container.envFrom || []) {
    if (!e.secretRef) continue;
    if (e.secretRef.name === EXTERNAL_SECRET) Object.assign(env, STAND_IN_URLS);
    const s = byKey.get(`Secret/${e.secretRef.name}`);
    if (!s) continue;
    for (const [k, v] of Object.entries(s.data || {})) env[k] = Buffer.from(v, "base64").toString("utf8");
    Object.assign(env, s.stringData || {});
  }
  return env;
}

function checkCommands(byKey, runs, work) {
  const commands = new Set(runs.map((r) => r.command));
  for (const want of ["migrate", "tick", "ingest", "serve"]) {
    if (!commands.has(want)) fail("deploy/k8s", `no workload runs 'boardkeeper ${want}'`);
  }
  for (const r of runs) {
    const file = r.globals["--config"];
    if (!file) {
      fail(r.where, "no --config: the image's example config would be used");
      continue;
    }
    const m = mountedKey(r.spec, r.container, file, byKey);
    if (m.error) {
      fail(r.where, `--config ${file}: ${m.error}`);
      continue;
    }
    const env = secretEnv(r.spec, r.container, byKey);
    for (const v of ["BOARDKEEPER_REDIS_URL", "BOARDKEEPER_POSTGRES_URL"]) {
      if (!env[v]) fail(r.where, `gets no ${v} from a Secret`);
    }
    // 4. The config as this container sees it, with its Secret's URLs.
    const cfg = path.join(work, `${m.configMap.metadata.name}.${m.key}`);
    fs.writeFileSync(cfg, m.configMap.data[m.key]);
    const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("BOARDKEEPER_")));
    const res = childProcess.spawnSync(args.binary, ["--config", cfg, "check-config"], {
      encoding: "utf8",
      env: { ...cleanEnv, ...env },
    });
    if (res.status !== 0) {
      fail(r.where, `boardkeeper check-config exits ${res.status}:\n${res.stdout}${res.stderr}`);
    }
    checkArgvParses(r, cfg, cleanEnv);
    if (r.command === "ingest") checkIngest(r);
    if (r.command === "serve") checkServe(r, byKey);
    if (r.command === "tick") checkTick(r);
  }
}

// The flags of the metrics interface (issue 6), which a binary built before it does not
// know yet: such a binary is checked without them, and says so.
const METRICS_FLAGS = ["--listen", "--pushgateway", "--metrics-file"];
const helpCache = new Map();
function commandHelp(command) {
  if (!helpCache.has(command)) {
    const h = childProcess.spawnSync(args.binary, [command, "--help"], { encoding: "utf8" });
    helpCache.set(command, h.stdout || "");
  }
  return helpCache.get(command);
}

function freeLoopbackPort() {
  const script =
    "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})";
  return childProcess.spawnSync(process.execPath, ["-e", script], { encoding: "utf8" }).stdout.trim();
}

// The container's argv, run for real by the built binary, must get past the command line:
// with Redis and PostgreSQL pointed at a closed loopback port that is exit 3 (unreachable;
// ingest retries until SIGTERM, then 0), where a misspelt flag, a bad value or a global
// option in the wrong place is exit 2.
function checkArgvParses(r, cfg, env) {
  const argv = [];
  const globals = { ...r.globals, "--config": cfg };
  for (const [k, v] of Object.entries(globals)) argv.push(k, v);
  argv.push(r.command);
  const help = commandHelp(r.command);
  for (let i = 0; i < r.rest.length; i++) {
    const [flag, inline] = r.rest[i].split(/=(.*)/s);
    if (METRICS_FLAGS.includes(flag)) {
      const hasValue = inline === undefined;
      if (!new RegExp(`${flag}\\b`).test(help)) {
        console.log(`NOTE ${r.where}: this boardkeeper has no ${r.command} ${flag} yet; checked without it`);
        if (hasValue) i++;
        continue;
      }
      // Nothing leaves the machine: the listener and the push go to loopback, the file to
      // the work directory.
      const local = {
        "--listen": () => `127.0.0.1:${freeLoopbackPort()}`,
        "--pushgateway": () => "http://127.0.0.1:1",
        "--metrics-file": () => path.join(path.dirname(cfg), "tick.prom"),
      }[flag];
      argv.push(flag, local());
      if (hasValue) i++;
      continue;
    }
    argv.push(r.rest[i]);
  }
  // ingest and serve wait outages out instead of exiting: ingest must be retrying Redis
  // when stopped (SIGTERM), serve must say Redis is not reachable, and both then exit 0.
  const waits = r.command === "ingest" || r.command === "serve";
  // Its output goes to a file: spawnSync closes its pipes when the time is up, and the
  // summary ingest writes on SIGTERM would then meet a closed pipe.
  const outFile = path.join(path.dirname(cfg), "argv-run.out");
  const outFd = fs.openSync(outFile, "w");
  const res = childProcess.spawnSync(args.binary, argv, {
    encoding: "utf8",
    timeout: waits ? 2000 : 30000,
    killSignal: "SIGTERM",
    stdio: ["ignore", outFd, outFd],
    env: {
      ...env,
      BOARDKEEPER_REDIS_URL: "redis://127.0.0.1:1/0",
      BOARDKEEPER_POSTGRES_URL: "postgresql://boardkeeper@127.0.0.1:1/boards",
    },
  });
  fs.closeSync(outFd);
  res.stderr = fs.readFileSync(outFile, "utf8");
  if (waits) {
    const said = r.command === "serve" ? /redis is not reachable/ : /redis failed/;
    if (res.status !== 0 || !said.test(res.stderr)) {
      fail(r.where, `args ${JSON.stringify(r.container.args)}: boardkeeper ${argv.join(" ")} ` +
        `should retry with Redis and PostgreSQL down and exit 0 on SIGTERM, but exits ` +
        `${res.status ?? res.signal}:\n${res.stderr}`);
    }
    return;
  }
  if (res.status !== 3) {
    fail(r.where, `args ${JSON.stringify(r.container.args)}: boardkeeper ${argv.join(" ")} exits ` +
      `${res.status ?? res.signal} with Redis and PostgreSQL down, not 3 (unreachable):\n${res.stderr}`);
  }
}

// A long-running command in a Deployment that listens (--listen ADDR:PORT) on a declared
// container port named `portName`, probed on /healthz and /readyz at that port: its port,
// or null when --listen is missing.
function checkListener(r, portName, purpose) {
  const { obj, container: c, where } = r;
  if (obj.kind !== "Deployment") fail(where, `${r.command} runs in a Deployment`);
  const listen = r.rest[r.rest.indexOf("--listen") + 1];
  if (!r.rest.includes("--listen") || !/^[0-9.]+:\d+$/.test(listen || "")) {
    fail(where, `${r.command} needs --listen ADDR:PORT for ${purpose}`);
    return null;
  }
  const port = Number(listen.split(":")[1]);
  const declared = (c.ports || []).find((p) => p.containerPort === port);
  if (!declared || declared.name !== portName) fail(where, `container port ${port} must be declared, named ${portName}`);
  for (const [probe, wantPath] of [["livenessProbe", "/healthz"], ["readinessProbe", "/readyz"]]) {
    const p = c[probe]?.httpGet;
    if (!p) {
      fail(where, `needs an httpGet ${probe} on ${wantPath}`);
      continue;
    }
    if (p.path !== wantPath) fail(where, `${probe} must get ${wantPath}, not ${p.path}`);
    const probePort = typeof p.port === "string" ? (c.ports || []).find((x) => x.name === p.port)?.containerPort : p.port;
    if (probePort !== port) fail(where, `${probe} port ${p.port} is not the --listen port ${port}`);
  }
  return port;
}

function checkIngest(r) {
  const { obj, spec, where } = r;
  const port = checkListener(r, "metrics", "/metrics, /healthz and /readyz");
  if (port === null) return;
  const ann = obj.spec.template.metadata?.annotations || {};
  if (ann["prometheus.io/scrape"] !== "true" || ann["prometheus.io/port"] !== String(port)) {
    fail(where, "pod template needs prometheus.io/scrape and prometheus.io/port annotations");
  }
  if (!(spec.terminationGracePeriodSeconds >= 10)) {
    fail(where, "terminationGracePeriodSeconds must leave time to finish a batch (>= 10)");
  }
}

// serve: a Deployment listening on a declared port "http", probed on /healthz and /readyz,
// with a Service that selects its pods and targets that port.
function checkServe(r, byKey) {
  const { obj, where } = r;
  const port = checkListener(r, "http", "the API and the probes");
  if (port === null) return;
  const labels = obj.spec.template.metadata?.labels || {};
  const services = [...byKey.values()].filter((o) => o.kind === "Service");
  const selecting = services.filter((svc) => {
    const sel = svc.spec?.selector || {};
    return Object.keys(sel).length > 0 && Object.entries(sel).every(([k, v]) => labels[k] === v);
  });
  if (selecting.length === 0) fail(where, "no Service selects serve's pods");
  for (const svc of selecting) {
    for (const p of svc.spec.ports || []) {
      if (p.targetPort !== "http" && p.targetPort !== port) {
        fail(`Service/${svc.metadata.name}`, `targetPort ${p.targetPort} is not serve's port (http, ${port})`);
      }
    }
  }
}

function checkTick(r) {
  const { obj, where } = r;
  if (obj.kind !== "CronJob") {
    fail(where, "tick runs in a CronJob");
    return;
  }
  const s = obj.spec;
  if (s.concurrencyPolicy !== "Forbid") fail(where, "concurrencyPolicy must be Forbid (no pile-up)");
  if (!(s.startingDeadlineSeconds > 0)) fail(where, "needs startingDeadlineSeconds");
  if (!(s.jobTemplate.spec.activeDeadlineSeconds > 0)) fail(where, "needs activeDeadlineSeconds (a hung tick blocks Forbid)");
  if (s.jobTemplate.spec.backoffLimit === undefined) fail(where, "needs an explicit backoffLimit");
  if (s.successfulJobsHistoryLimit === undefined || s.failedJobsHistoryLimit === undefined) {
    fail(where, "needs successfulJobsHistoryLimit and failedJobsHistoryLimit");
  }
  const fields = String(s.schedule).trim().split(/\s+/);
  if (fields.length !== 5) fail(where, `schedule '${s.schedule}' is not five cron fields`);
}

// The optional component monitoring/ (Prometheus Operator): a kustomize Component whose
// PodMonitor scrapes ports the base's pods declare and whose PrometheusRule's expressions
// name only metrics boardkeeper exposes (every boardkeeper_* name in src/, with a
// histogram's _bucket/_sum/_count).
function checkMonitoring(base, objects) {
  const dir = path.join(base, "monitoring");
  if (!fs.existsSync(dir)) {
    fail(dir, "the monitoring component is missing");
    return;
  }
  const kfile = path.join(dir, "kustomization.yaml");
  const [k] = parseYamlDocs(kfile);
  if (!k || k.apiVersion !== "kustomize.config.k8s.io/v1alpha1" || k.kind !== "Component") {
    fail(kfile, "must be a kustomize.config.k8s.io/v1alpha1 Component");
    return;
  }
  const parts = [];
  for (const r of k.resources || []) {
    for (const obj of parseYamlDocs(path.join(dir, r))) parts.push({ obj, source: `monitoring/${r}` });
  }
  for (const f of fs.readdirSync(dir)) {
    if (/\.ya?ml$/.test(f) && f !== "kustomization.yaml" && !(k.resources || []).includes(f)) {
      fail(kfile, `${f} is in monitoring/ but not a resource`);
    }
  }
  // The metric names in the sources.
  const known = new Set();
  const src = path.resolve(__dirname, "../../src");
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const f = path.join(d, e.name);
      if (e.isDirectory()) walk(f);
      else if (/\.(cpp|h)$/.test(e.name)) {
        for (const m of fs.readFileSync(f, "utf8").matchAll(/"(boardkeeper_[a-z0-9_]+)"/g)) {
          for (const suffix of ["", "_bucket", "_sum", "_count"]) known.add(m[1] + suffix);
        }
      }
    }
  };
  walk(src);
  const pods = objects.filter(({ obj }) => obj.kind === "Deployment").map(({ obj }) => obj.spec.template);
  let monitors = 0, rules = 0;
  for (const { obj, source } of parts) {
    const where = `${source}: ${keyOf(obj)}`;
    if (obj.apiVersion !== "monitoring.coreos.com/v1") fail(where, "apiVersion must be monitoring.coreos.com/v1");
    for (const l of LABELS) if (!obj.metadata?.labels?.[l]) fail(where, `needs the label ${l}`);
    if (obj.kind === "PodMonitor") {
      ++monitors;
      const selected = pods.filter((t) => selects(obj.spec?.selector?.matchLabels, t.metadata?.labels || {}));
      if (selected.length < 2) fail(where, "must select the pods of both ingest and serve");
      const ports = new Set(selected.flatMap((t) => t.spec.containers.flatMap((c) => (c.ports || []).map((p) => p.name))));
      for (const e of obj.spec?.podMetricsEndpoints || []) {
        if (!ports.has(e.port)) fail(where, `scrapes port '${e.port}', which no selected pod declares`);
        if (e.path !== "/metrics") fail(where, `scrapes ${e.path}, not /metrics`);
      }
      for (const t of selected) {
        const named = t.spec.containers.flatMap((c) => (c.ports || []).map((p) => p.name));
        if (!(obj.spec.podMetricsEndpoints || []).some((e) => named.includes(e.port))) {
          fail(where, `scrapes none of the ports of the pods labelled ${JSON.stringify(t.metadata.labels)}`);
        }
      }
    } else if (obj.kind === "PrometheusRule") {
      for (const g of obj.spec?.groups || []) {
        for (const r of g.rules || []) {
          ++rules;
          const rw = `${where} rule ${r.alert || r.record}`;
          if (!r.alert || !r.expr) fail(rw, "needs alert and expr");
          if (!r.labels?.severity) fail(rw, "needs a severity label");
          for (const m of String(r.expr).matchAll(/\bboardkeeper_[a-z0-9_]+/g)) {
            if (!known.has(m[0])) fail(rw, `uses ${m[0]}, which boardkeeper does not expose`);
          }
          let depth = 0;
          for (const ch of String(r.expr)) {
            depth += ch === "(" ? 1 : ch === ")" ? -1 : 0;
            if (depth < 0) break;
          }
          if (depth !== 0) fail(rw, "unbalanced parentheses in expr");
        }
      }
    } else {
      fail(where, "monitoring/ holds PodMonitors and PrometheusRules only");
    }
  }
  if (monitors !== 1 || rules === 0) fail(dir, `wants one PodMonitor and some rules (has ${monitors}, ${rules})`);
  console.log(`deploy/k8s/monitoring: ${monitors} PodMonitor, ${rules} alert rules checked`);
}

// ---------------------------------------------------------------------------------------

function main() {
  const base = path.resolve(args.base);
  const work = path.resolve(args.work);
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });

  const objects = render(base);
  fs.writeFileSync(
    path.join(work, "rendered.yaml"),
    objects.map(({ obj }) => YAML.stringify(obj, { version: "1.1" })).join("---\n"),
  );
  crossCheckWithKubectl(base, objects);
  validateSchemas(objects, work);
  const { byKey, runs } = checkWorkloads(objects);
  checkCommands(byKey, runs, work);
  checkLabels(objects);
  checkAvailability(objects);
  checkMonitoring(base, objects);

  for (const { obj } of objects) console.log(`rendered ${keyOf(obj)}`);
  if (errors.length) {
    for (const e of errors) console.error(`FAIL ${e}`);
    console.error(`${errors.length} problem(s) in ${base} (rendering in ${work})`);
    process.exit(1);
  }
  console.log(`deploy/k8s: ${objects.length} objects render, validate and pass check-config`);
}

main();
