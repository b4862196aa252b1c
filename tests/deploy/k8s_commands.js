"use strict";
// 3-4. The commands the workloads run (check_k8s.js): boardkeeper's argv (global options,
// then one command), --config on a mounted ConfigMap key, the Secret's URLs, `check-config`
// on the config the pods get, the argv run for real by the built binary, and what ingest,
// serve and tick each need of their workload.
const fs = require("fs");
const path = require("path");
const childProcess = require("child_process");
const { args, fail } = require("./k8s_context");

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

// The argv checkArgvParses runs: the container's, with --config `cfg` and the metrics flags
// pointed at loopback and the work directory (nothing leaves the machine); a flag this
// binary does not know yet is left out, and said so.
function argvToRun(r, cfg) {
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
  return argv;
}

// The container's argv, run for real by the built binary, must get past the command line:
// with Redis and PostgreSQL pointed at a closed loopback port that is exit 3 (unreachable;
// ingest retries until SIGTERM, then 0), where a misspelt flag, a bad value or a global
// option in the wrong place is exit 2.
function checkArgvParses(r, cfg, env) {
  const argv = argvToRun(r, cfg);
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
module.exports = { splitArgs, EXTERNAL_SECRET, checkCommands };
