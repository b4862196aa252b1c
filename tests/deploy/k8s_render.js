"use strict";
// 1. Rendering deploy/k8s the way `kubectl kustomize` does (check_k8s.js): resources and
// the configMapGenerator with the content-hash name suffix, the references to it rewritten;
// cross-checked against kubectl's rendering when a kubectl with kustomize v5 is on PATH.
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const childProcess = require("child_process");
const { YAML, fail } = require("./k8s_context");

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


// The base's kustomization.yaml, refused where it uses what this rendering does not know.
function readKustomization(base) {
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
  return { kfile, k };
}

// The objects of the resources (files of this directory, each once), into `objects`.
function readResources(base, { kfile, k }, objects, used) {
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
}

// One configMapGenerator entry: its ConfigMap named with the content hash, into `objects`;
// returns that name.
function generateConfigMap(base, kfile, g, objects, used) {
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
  const metadata = { name };
  if (g.options?.labels) metadata.labels = { ...g.options.labels };
  objects.push({ obj: { apiVersion: "v1", kind: "ConfigMap", metadata, data }, source: "configMapGenerator" });
  return name;
}

function render(base) {
  const kustomization = readKustomization(base);
  const { kfile, k } = kustomization;
  const objects = [];
  const used = new Set(["kustomization.yaml"]);
  readResources(base, kustomization, objects, used);
  const renames = { ConfigMap: new Map(), Secret: new Map() };
  for (const g of k.configMapGenerator || []) {
    renames.ConfigMap.set(g.name, generateConfigMap(base, kfile, g, objects, used));
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


module.exports = { parseYamlDocs, podSpecs, containersOf, forEachReference, render, keyOf, crossCheckWithKubectl };
