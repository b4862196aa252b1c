// console_test.js: drives serve's console in headless chromium over the DevTools protocol
// (--remote-debugging-pipe: NUL-separated JSON on file descriptors 3 and 4, so no npm
// package and no downloaded browser) and checks what a user would see against the API's own
// JSON. Run by console_test.sh, which seeds the board and starts serve.
//   node console_test.js --chromium PATH --url http://HOST:PORT --token T --board B
//                        --hostile ID --out DIR --cli-periods FILE
// Exit 0: every check passed; 1: a check failed (each printed as FAIL); 77: chromium could
// not start (skipped, with the reason).
"use strict";

const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
for (const k of ["chromium", "url", "token", "board", "hostile", "out", "cli-periods"]) {
  if (args[k] === undefined) {
    console.error(`console_test.js: --${k} is missing`);
    process.exit(2);
  }
}

// Loops are bounded by count; each step waits at most about a minute on a loaded machine.
const POLLS = 600;
const POLL_MS = 100;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const failures = [];
let checks = 0;
function check(ok, what) {
  ++checks;
  if (ok) console.log(`ok: ${what}`);
  else {
    console.log(`FAIL: ${what}`);
    failures.push(what);
  }
}

// --- The browser, over the DevTools pipe -------------------------------------------------

class Browser {
  constructor(binary) {
    this.profile = fs.mkdtempSync(path.join(os.tmpdir(), "bk-console-chromium-"));
    const flags = ["--headless=new", "--remote-debugging-pipe", `--user-data-dir=${this.profile}`,
      "--no-first-run", "--no-default-browser-check", "--disable-gpu", "--disable-extensions",
      "--disable-background-networking", "--disable-sync", "--disable-dev-shm-usage",
      "--window-size=1280,900", "--lang=en-GB", "about:blank"];
    // chromium refuses to run its sandbox as root (CI containers).
    if (process.getuid && process.getuid() === 0) flags.unshift("--no-sandbox");
    this.proc = spawn(binary, flags, { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] });
    this.stderr = "";
    this.proc.stderr.on("data", (d) => { this.stderr = (this.stderr + d).slice(-4000); });
    this.exited = new Promise((resolve) => this.proc.on("exit", (code, sig) => resolve(`exited (${code ?? sig})`)));
    this.proc.on("error", (e) => { this.spawnError = e; });
    this.next = 1;
    this.pending = new Map();
    this.listeners = [];
    let buf = "";
    this.proc.stdio[4].on("data", (chunk) => {
      buf += chunk.toString("utf8");
      let end;
      while ((end = buf.indexOf("\0")) >= 0) {
        const msg = JSON.parse(buf.slice(0, end));
        buf = buf.slice(end + 1);
        if (msg.id && this.pending.has(msg.id)) {
          const { resolve, reject, method } = this.pending.get(msg.id);
          this.pending.delete(msg.id);
          if (msg.error) reject(new Error(`${method}: ${msg.error.message}`));
          else resolve(msg.result);
        } else if (msg.method) {
          for (const l of this.listeners) l(msg);
        }
      }
    });
  }
  send(method, params = {}, sessionId) {
    const id = this.next++;
    const msg = { id, method, params };
    if (sessionId) msg.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.proc.stdio[3].write(`${JSON.stringify(msg)}\0`);
    });
  }
  on(fn) {
    this.listeners.push(fn);
  }
  async close() {
    try {
      await Promise.race([this.send("Browser.close"), sleep(5000)]);
    } catch (_) { /* already gone */ }
    this.proc.kill("SIGKILL");
    await Promise.race([this.exited, sleep(5000)]);
    try {
      fs.rmSync(this.profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    } catch (e) {
      console.log(`note: the browser profile ${this.profile} stays (${e.code})`);
    }
  }
}

// A page (one target) with the helpers the checks need.
class Page {
  constructor(browser, sessionId) {
    this.b = browser;
    this.s = sessionId;
    this.requests = []; // every URL the page asked for
    this.sent = []; // {id, url} of each request
    this.headers = new Map(); // request id: the headers it went out with (lower-case names)
    this.dialogs = []; // alert(), confirm()...: a script ran that should not have
    this.exceptions = [];
    browser.on((m) => {
      if (m.sessionId !== this.s) return;
      if (m.method === "Network.requestWillBeSent") {
        this.requests.push(m.params.request.url);
        this.sent.push({ id: m.params.requestId, url: m.params.request.url });
      }
      if (m.method === "Network.requestWillBeSentExtraInfo") {
        const h = {};
        for (const [k, v] of Object.entries(m.params.headers || {})) h[k.toLowerCase()] = v;
        this.headers.set(m.params.requestId, h);
      }
      if (m.method === "Page.javascriptDialogOpening") {
        this.dialogs.push(m.params.message);
        this.cmd("Page.handleJavaScriptDialog", { accept: true }).catch(() => {});
      }
      if (m.method === "Runtime.exceptionThrown") this.exceptions.push(m.params.exceptionDetails.text);
    });
  }
  cmd(method, params) {
    return this.b.send(method, params, this.s);
  }
  async eval(expression) {
    const r = await this.cmd("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true });
    if (r.exceptionDetails) throw new Error(`page: ${r.exceptionDetails.exception?.description || r.exceptionDetails.text}`);
    return r.result.value;
  }
  async waitFor(expression, what) {
    for (let i = 0; i < POLLS; i++) {
      const v = await this.eval(expression).catch(() => undefined);
      if (v) return v;
      await sleep(POLL_MS);
    }
    const error = await this.eval("document.getElementById('error').textContent").catch(() => "?");
    throw new Error(`timed out waiting for ${what} (the page's error line: '${error}')`);
  }
  async go(url) {
    await this.cmd("Page.navigate", { url });
  }
  async key(k) {
    for (const type of ["keyDown", "keyUp"]) {
      await this.cmd("Input.dispatchKeyEvent", { type, key: k, text: type === "keyDown" ? k : undefined, code: `Key${k.toUpperCase()}` });
    }
  }
  async screenshot(name) {
    // The whole page, not just the window.
    const { cssContentSize: size } = await this.cmd("Page.getLayoutMetrics");
    const clip = { x: 0, y: 0, width: Math.ceil(size.width), height: Math.min(Math.ceil(size.height), 4000), scale: 1 };
    const r = await this.cmd("Page.captureScreenshot", { format: "png", captureBeyondViewport: true, clip });
    const file = path.join(args.out, name);
    fs.writeFileSync(file, Buffer.from(r.data, "base64"));
    console.log(`screenshot: ${file}`);
  }
}

async function openPage(browser) {
  const failedStart = await Promise.race([
    browser.send("Browser.getVersion").then((v) => { console.log(`browser: ${v.product}`); return null; }),
    browser.exited,
    sleep(60000).then(() => "did not answer within 60 s"),
  ]);
  if (browser.spawnError) return { skip: `${args.chromium} cannot be run: ${browser.spawnError.message}` };
  if (failedStart) return { skip: `chromium ${failedStart}: ${browser.stderr.trim().split("\n").slice(-3).join(" | ")}` };
  const { targetId } = await browser.send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await browser.send("Target.attachToTarget", { targetId, flatten: true });
  const page = new Page(browser, sessionId);
  for (const d of ["Page.enable", "Runtime.enable", "Network.enable"]) await page.cmd(d);
  return { page };
}

// --- The API's own answers, to compare with the page ---------------------------------------

async function api(p, params = {}) {
  const qs = new URLSearchParams(params).toString();
  const res = await fetch(`${args.url}${p}${qs ? `?${qs}` : ""}`, { headers: { Authorization: `Bearer ${args.token}` } });
  const body = await res.json();
  if (!res.ok) throw new Error(`API ${p}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}
const enc = encodeURIComponent;

// The rendered rows of the listing table: [rank, member, name, store, tier] each.
const ROWS = `[...document.querySelectorAll('table.listing tbody tr')].map((tr) => [
  Number(tr.querySelector('td.rank').textContent), tr.querySelector('td.member').textContent,
  tr.querySelector('td.name').textContent, (tr.querySelector('.store') || {}).textContent || '',
  (tr.querySelector('td.tier') || {}).textContent])`;

// Ranks and members, and the tier column where the API's records carry a tier.
function sameRows(rendered, records, what) {
  const tiered = records.some((r) => "tier" in r);
  const want = records.map((r) => tiered ? [r.rank, r.member, r.tier === null ? "–" : r.tier] : [r.rank, r.member]);
  const got = (rendered || []).map((r) => tiered ? [r[0], r[1], r[4]] : [r[0], r[1]]);
  check(JSON.stringify(got) === JSON.stringify(want),
    `${what}: rendered ranks, members (and tiers) equal the API's JSON (${got.length} rows${got.length ? `, ranks ${got[0][0]}..${got[got.length - 1][0]}` : ""})` +
    (JSON.stringify(got) === JSON.stringify(want) ? "" : `\n  rendered ${JSON.stringify(got)}\n  API      ${JSON.stringify(want)}`));
}

async function waitRows(page, expect, what) {
  // The table shows the page whose first member is the API's: loading is over.
  return page.waitFor(`(() => { const r = ${ROWS}; return r.length === ${expect.length} && r.length > 0 && r[0][1] === ${JSON.stringify(expect[0]?.member)} && r; })()`, what);
}

// --- The checks --------------------------------------------------------------------------

// The pages checked below, the board's periods as the API gives them, and where the
// requests with the token begin.
async function context(page) {
  const base = `${args.url}/console/`;
  const board = args.board;
  const periods = await api(`/v1/boards/${enc(board)}/periods`);
  const daily = periods.periods.find((p) => p.period === "daily");
  const archived = await api(`/v1/boards/${enc(board)}/daily/history`);
  // The API's hot and cold counts are the CLI's (`periods --json`).
  const cli = fs.readFileSync(args["cli-periods"], "utf8").trim().split("\n").map((l) => JSON.parse(l)).find((p) => p.period === "daily");
  check(cli && daily.hot_members === cli.hot_members && daily.cold_members === cli.cold_members && cli.cold_members > 0,
    `the API's periods say ${daily.hot_members} hot and ${daily.cold_members} cold, as the CLI (${cli && cli.hot_members}, ${cli && cli.cold_members})`);

  return { page, base, board, daily, archived };
}

// Without a token the page says why; the token typed in loads the board page. Returns where
// the requests that carry it begin.
async function checkToken(ctx) {
  const { page, base, board, daily, archived } = ctx;
  // Without a token: the API's 401 in words, not a blank page.
  await page.go(`${base}#/board/${enc(board)}`);
  const said = await page.waitFor("document.getElementById('error').textContent", "the 401 shown in words");
  check(/401/.test(said) && /token/i.test(said), `without a token the page says why: '${said}'`);

  // The token, typed and submitted; the board page then loads.
  const withToken = page.sent.length; // the requests from here on carry it
  await page.eval(`(() => { const t = document.getElementById('token'); t.value = ${JSON.stringify(args.token)};
    document.getElementById('token-form').requestSubmit(); })()`);
  await page.waitFor("document.querySelectorAll('table.periods tbody tr').length > 0", "the periods table");
  await page.waitFor(`document.querySelectorAll('section[aria-label="Archived periods"] tbody tr').length >= ${archived.periods.length}`, "the archived periods");
  const shown = await page.eval(`[...document.querySelectorAll('table.periods tbody tr')].map((tr) => [...tr.children].map((c) => c.textContent))`);
  const row = shown.find((r) => r[0] === "daily");
  check(row && row[1] === daily.period_id && row[4] === daily.members.toLocaleString("en-GB") && Number(row[6]) === daily.cold_members,
    `board page: daily ${daily.period_id}, ${daily.members} members, ${daily.cold_members} cold (${JSON.stringify(row)})`);
  const ids = await page.eval(`[...document.querySelectorAll('section[aria-label="Archived periods"] tbody tr td:first-child')].map((td) => td.textContent)`);
  check(JSON.stringify(ids) === JSON.stringify(archived.periods.map((p) => p.period_id)),
    `board page lists the archived periods ${JSON.stringify(ids)}`);
  check(await page.eval("sessionStorage.getItem('bk.console.token') !== null && document.getElementById('token').value === ''"),
    "the token is kept in sessionStorage and cleared from the input");
  await page.screenshot("board.png");
  return withToken;
}

async function checkStartPage(ctx) {
  const { page, base, board } = ctx;
  // The start page lists the boards of GET /v1/boards: names and periods link to their pages.
  const boards = await api("/v1/boards");
  await page.go(`${base}#/`);
  await page.waitFor("document.querySelectorAll('table.boards tbody tr').length > 0", "the list of boards");
  const listed = await page.eval(`[...document.querySelectorAll('table.boards tbody tr')].map((tr) =>
    [...tr.children].map((c) => c.textContent).concat([(tr.querySelector('td.board a') || {}).hash || ""]))`);
  const wantBoards = boards.boards.map((b) => [b.board, b.periods.join(" "), b.in_redis ? "yes" : "no"]);
  check(JSON.stringify(listed.map((r) => r.slice(0, 3))) === JSON.stringify(wantBoards) && boards.boards.length >= 2,
    `start page: the boards, periods and Redis flags of the API (${JSON.stringify(listed.map((r) => r.slice(0, 3)))})`);
  const arenaRow = listed.find((r) => r[0] === board);
  check(arenaRow && arenaRow[4] === `#/board/${enc(board)}`, `start page: ${board} links to its board page (${arenaRow && arenaRow[4]})`);
  check(await page.eval("document.getElementById('more-boards').hidden"), "start page: no More boards after the last page");
  await page.screenshot("boards.png");
  await page.eval(`[...document.querySelectorAll('table.boards td.board a')].find((a) => a.textContent === ${JSON.stringify(board)}).click()`);
  await page.waitFor("document.querySelectorAll('table.periods tbody tr').length > 0", "the board page, from the start page");
}

async function checkListing(ctx) {
  const { page, base, board, daily } = ctx;
  // The current period's listing, 10 a page: forward with the keyboard (n), back with the button.
  await page.go(`${base}#/top/${enc(board)}/daily/${enc(daily.period_id)}`);
  await page.waitFor("document.querySelectorAll('table.listing tbody tr').length > 0", "the listing");
  await page.eval(`(() => { const s = document.getElementById('page-size'); s.value = '10'; s.dispatchEvent(new Event('change')); })()`);
  const pages = [];
  let cursor;
  do {
    const p = await api(`/v1/boards/${enc(board)}/daily/top`, { period_id: daily.period_id, limit: 10, ...(cursor ? { cursor } : {}) });
    pages.push(p);
    cursor = p.next_cursor;
  } while (cursor && pages.length < 10);
  check(pages.length >= 3, `the API lists today in ${pages.length} pages of 10`);
  let rows = await waitRows(page, pages[0].records, "page 1");
  sameRows(rows, pages[0].records, "listing page 1");
  const hot = daily.hot_members;
  const stores = rows.map((r) => r[3]);
  check(stores.every((t, i) => t === (i < hot ? "hot" : "cold")),
    `listing page 1: the first ${hot} rows are stored hot, the rest cold (${stores.join(" ")})`);
  const hostileRow = rows.find((r) => r[1] === args.hostile);
  check(hostileRow && hostileRow[2] === args.hostile, `the hostile member id and name render as text: ${JSON.stringify(hostileRow)}`);
  await page.screenshot("listing.png");
  for (let i = 1; i < pages.length; i++) {
    await page.eval("document.activeElement && document.activeElement.blur()");
    await page.key("n");
    rows = await waitRows(page, pages[i].records, `page ${i + 1} (key n)`);
    sameRows(rows, pages[i].records, `listing page ${i + 1}, reached with the n key`);
  }
  check(await page.eval("document.getElementById('next').disabled"), "Next is disabled on the last page");
  for (let i = pages.length - 2; i >= 0; i--) {
    await page.eval("document.getElementById('prev').click()");
    rows = await waitRows(page, pages[i].records, `page ${i + 1} (Previous)`);
    sameRows(rows, pages[i].records, `listing page ${i + 1}, back with Previous`);
  }
  check(await page.eval("document.getElementById('prev').disabled"), "Previous is disabled on the first page");
  return pages;
}

async function checkJump(ctx, pages) {
  const { page, board, daily } = ctx;
  // Jump to a member: the around view, the member marked, ranks as the API's.
  const target = pages[1].records[3].member;
  const around = await api(`/v1/boards/${enc(board)}/daily/members/${enc(target)}/around`, { period_id: daily.period_id, k: 5 });
  await page.eval(`(() => { document.getElementById('jump').value = ${JSON.stringify(target)};
    document.getElementById('jump').form.requestSubmit(); })()`);
  await page.waitFor("document.querySelector('table.around')", "the around table");
  sameRows(await page.eval(ROWS), around.records, `jump to ${target}`);
  check(await page.eval("(document.querySelector('table.around tr.me td.member') || {}).textContent") === target,
    `jump to ${target}: the member's row is marked`);
}

async function checkArchivedListing(ctx) {
  const { page, base, board, daily, archived } = ctx;
  // An archived period's listing.
  const old = archived.periods[archived.periods.length - 1];
  const oldTop = await api(`/v1/boards/${enc(board)}/daily/top`, { period_id: old.period_id, limit: 25 });
  await page.go(`${base}#/top/${enc(board)}/daily/${enc(old.period_id)}`);
  const rows = await waitRows(page, oldTop.records, `archived ${old.period_id}`);
  sameRows(rows, oldTop.records, `archived listing ${old.period_id}`);
  check(rows.every((r) => r[3] === "archived"), `archived listing ${old.period_id}: every row is archived`);
}

async function checkMemberPages(ctx) {
  const { page, base, board, daily, archived } = ctx;
  // The hostile member's own page: its id in the path, its finishes, no script ran.
  await page.go(`${base}#/member/${enc(board)}/${enc(args.hostile)}`);
  const onMemberPage = (m, also) => `document.querySelector('main h2') && document.querySelector('main h2').textContent === ${JSON.stringify(`Member ${m}`)} && ${also}`;
  await page.waitFor(onMemberPage(args.hostile, "document.querySelector('table.finishes') && document.querySelector('.chart svg')"), "the hostile member's finishes and chart");
  const heading = await page.eval("document.querySelector('main h2').textContent");
  check(heading === `Member ${args.hostile}`, `member page heading is the id as text: '${heading}'`);

  // A member's page: rank and neighbours now, every archived finish, the chart.
  const who = "player03";
  await page.go(`${base}#/member/${enc(board)}/${enc(who)}`);
  await page.waitFor(onMemberPage(who, "document.querySelector('table.finishes') && document.querySelector('.chart svg circle')"), "the member page");
  const now = await api(`/v1/boards/${enc(board)}/daily/members/${enc(who)}/around`, { period_id: daily.period_id, k: 3 });
  sameRows(await page.eval(ROWS), now.records, `member ${who}: neighbours today`);
  const finishes = [];
  for (const a of archived.periods) {
    finishes.push([a.period_id, (await api(`/v1/boards/${enc(board)}/daily/members/${enc(who)}`, { period_id: a.period_id })).rank]);
  }
  const shownFinishes = await page.eval(`[...document.querySelectorAll('table.finishes tbody tr')].map((tr) => [tr.children[1].textContent, Number(tr.children[2].textContent)])`);
  check(JSON.stringify(shownFinishes) === JSON.stringify(finishes), `member ${who}: archived finishes ${JSON.stringify(shownFinishes)} equal the API's`);
  const dots = await page.eval("document.querySelectorAll('.chart svg circle').length");
  check(dots === finishes.length, `member ${who}: the chart has one point per archived finish (${dots})`);
  await page.screenshot("member.png");

  // A league member's page: its cohort, each row's zone, as the API lists them.
  await page.go(`${base}#/member/ligue/racer2`);
  await page.waitFor(onMemberPage("racer2", "document.querySelector('table.cohort tbody tr')"), "the league member's cohort");
  const cohort = await api("/v1/boards/ligue/daily/members/racer2/cohort", {});
  const shownCohort = await page.eval(`[...document.querySelectorAll('table.cohort tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent))`);
  const wantCohort = cohort.records.map((r) => [String(r.rank), r.member, String(r.points), r.zone]);
  check(JSON.stringify(shownCohort) === JSON.stringify(wantCohort) && cohort.cohort === "low-1" && wantCohort.length === 3,
    `league member's cohort ${JSON.stringify(shownCohort)} equals the API's ${JSON.stringify(wantCohort)}`);
}

async function checkErrorPage(ctx) {
  const { page, base, board } = ctx;
  // A page whose read fails (an unknown board: 404) says so, and shows nothing of the page
  // before it under its own title.
  await page.go(`${base}#/board/${enc("no-such-board")}`);
  const notFound = await page.waitFor("document.getElementById('error').textContent", "the 404 shown in words");
  check(/404/.test(notFound), `an unknown board's page says 404: '${notFound}'`);
  const leftOver = await page.eval("document.querySelectorAll('main table, main h2, main .chart').length");
  check(leftOver === 0, `after the 404 nothing of the member page stays in main (${leftOver} tables, headings or charts)`);
}

async function checkPhone(ctx) {
  const { page, base, board, daily } = ctx;
  // On a phone: the page fits the screen's width (tables scroll inside their box).
  await page.cmd("Emulation.setDeviceMetricsOverride", { width: 390, height: 844, deviceScaleFactor: 2, mobile: true });
  await page.go(`${base}#/top/${enc(board)}/daily/${enc(daily.period_id)}`);
  await waitRows(page, (await api(`/v1/boards/${enc(board)}/daily/top`, { period_id: daily.period_id, limit: 25 })).records, "the phone listing");
  const fits = await page.eval("document.documentElement.scrollWidth <= window.innerWidth + 1");
  check(fits, "on a 390 px phone the page is no wider than the screen");
  await page.screenshot("listing-phone.png");
  await page.cmd("Emulation.clearDeviceMetricsOverride");
}

async function checkNothingLeaked(ctx, withToken) {
  const { page } = ctx;
  // Hostile text stayed text everywhere; the token never rode in a URL.
  const injected = await page.eval("document.querySelectorAll('img, iframe, object, embed').length + document.querySelectorAll('script').length - 1");
  check(injected === 0, `no element was injected (img, iframe, object, embed, extra script: ${injected})`);
  check(page.dialogs.length === 0, `no script of the data ran (dialogs: ${JSON.stringify(page.dialogs)})`);
  check(page.exceptions.length === 0, `no uncaught exception in the page (${JSON.stringify(page.exceptions)})`);
  const leaks = page.requests.filter((u) => u.includes(args.token) || u.includes(enc(args.token)));
  check(page.requests.length > 20 && leaks.length === 0,
    `none of the ${page.requests.length} requests carries the token in its URL${leaks.length ? `: ${leaks.join(", ")}` : ""}`);
  const v1 = page.sent.slice(withToken).filter((r) => new URL(r.url).pathname.startsWith("/v1/")).map((r) => r.id);
  const bearer = v1.filter((id) => /^Bearer /.test(page.headers.get(id)?.authorization || ""));
  check(v1.length > 20 && bearer.length === v1.length,
    `every /v1 request once the token is set carries it as a Bearer header (${bearer.length} of ${v1.length})`);
}

async function run(page) {
  const ctx = await context(page);
  const withToken = await checkToken(ctx);
  await checkStartPage(ctx);
  const pages = await checkListing(ctx);
  await checkJump(ctx, pages);
  await checkArchivedListing(ctx);
  await checkMemberPages(ctx);
  await checkErrorPage(ctx);
  await checkPhone(ctx);
  await checkNothingLeaked(ctx, withToken);
}

async function main() {
  fs.mkdirSync(args.out, { recursive: true });
  const started = Date.now();
  const browser = new Browser(args.chromium);
  let code = 0;
  try {
    const { page, skip } = await openPage(browser);
    if (skip) {
      console.log(`SKIPPED console.browser: ${skip}`);
      code = 77;
    } else {
      await run(page);
      code = failures.length ? 1 : 0;
    }
  } catch (e) {
    check(false, e.message);
    code = 1;
  } finally {
    await browser.close();
  }
  if (code !== 77) {
    console.log(`${checks - failures.length} of ${checks} checks passed in ${((Date.now() - started) / 1000).toFixed(1)} s; screenshots in ${args.out}`);
  }
  process.exit(code);
}

main();
