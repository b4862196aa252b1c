// boardkeeper console: a read-only view of boards, periods, listings and members, drawn from
// the public /v1 API. Every value from the API reaches the page as text (text nodes,
// setAttribute), never as markup; the token lives in sessionStorage and travels only in the
// Authorization header.
// A module (index.html loads it with type="module"): strict, and its names stay its own.

const TOKEN_KEY = "bk.console.token";
const PAGE_SIZES = [10, 25, 50, 100];
const ARCHIVED_SHOWN = 20; // archived periods per kind on the member page and the chart
const $ = (id) => document.getElementById(id);
const enc = encodeURIComponent;
const userZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

// --- DOM: elements from data, text only -------------------------------------------------

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = String(text);
  return e;
}

function link(hash, ...text) {
  return el("a", { href: hash }, ...text);
}

function table(headers, rows, opts = {}) {
  const head = el("tr", {}, headers.map((h) => el("th", { scope: "col", class: h.cls }, h.text)));
  return el("div", { class: "scroll" },
    el("table", { class: opts.cls, "aria-label": opts.label }, el("thead", {}, head), el("tbody", {}, rows)));
}

function show(...nodes) {
  const main = $("main");
  main.replaceChildren(...nodes.flat());
}

function status(text) {
  $("status").textContent = text || "";
}

function fail(err) {
  $("error").textContent = err instanceof ApiError ? err.message : `Something went wrong: ${err && err.message}`;
}

// --- Formatting -------------------------------------------------------------------------

function when(iso, zone) {
  if (iso === null || iso === undefined) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  try {
    return new Intl.DateTimeFormat(undefined, {
      timeZone: zone, year: "numeric", month: "short", day: "numeric",
      hour: "2-digit", minute: "2-digit", timeZoneName: "short",
    }).format(d);
  } catch (_) {
    return String(iso);
  }
}

// A bound in the board's zone and, when it differs, in the user's.
function bound(iso, zone) {
  if (zone === userZone) return when(iso, zone);
  return el("span", {}, when(iso, zone), el("br"), el("span", { class: "muted" }, when(iso, userZone)));
}

function count(n) {
  return n === null || n === undefined ? "unknown" : Number(n).toLocaleString();
}

function metadata(m) {
  return m === undefined || m === null ? "" : JSON.stringify(m);
}

// --- The API ----------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function explain(code, said) {
  const what = said ? `: ${said}` : "";
  switch (code) {
    case 400: return `The API refused the request (400 bad request)${what}.`;
    case 401: return `The API wants a valid token (401 unauthorized)${what}. Paste one above.`;
    case 404: return `Not found (404)${what}.`;
    case 503: return `A server the API needs is down (503)${what}. Try again in a moment.`;
    default: return `The API answered ${code}${what}.`;
  }
}

async function api(path, params) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== "") query.set(k, String(v));
  }
  const qs = query.toString();
  const headers = { Accept: "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  let res;
  try {
    res = await fetch(path + (qs ? `?${qs}` : ""), {
      headers, cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer",
    });
  } catch (e) {
    throw new ApiError(0, `serve cannot be reached (${e.message}). Is it running?`);
  }
  let body = null;
  try {
    body = await res.json();
  } catch (_) {
    body = null;
  }
  if (!res.ok) throw new ApiError(res.status, explain(res.status, body && body.error));
  if (body === null) throw new ApiError(res.status, `The API answered ${res.status} without JSON.`);
  return body;
}

const boardPath = (b) => `/v1/boards/${enc(b)}`;
const periodPath = (b, p) => `${boardPath(b)}/${enc(p)}`;
const memberPath = (b, p, m) => `${periodPath(b, p)}/members/${enc(m)}`;

// At most `width` requests at once.
async function each(items, width, fn) {
  const out = new Array(items.length);
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, run));
  return out;
}

// --- Routes: #/ , #/board/B, #/top/B/P[/ID], #/member/B/M -------------------------------

const hash = (...parts) => `#/${parts.map(enc).join("/")}`;

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  if (!raw) return { page: "home", args: [] };
  try {
    const [page, ...args] = raw.split("/").map(decodeURIComponent);
    return { page, args };
  } catch (_) {
    return { page: "bad", args: [] };
  }
}

let generation = 0; // a newer render makes older, still loading ones drop their results

async function render() {
  const mine = ++generation;
  const current = () => mine === generation;
  $("error").textContent = "";
  status("");
  const { page, args } = parseHash();
  crumbs(page, args);
  try {
    if (page === "home") await homePage(current);
    else if (page === "board" && args.length === 1) await boardPage(args[0], current);
    else if (page === "top" && (args.length === 2 || args.length === 3)) await topPage(args, current);
    else if (page === "member" && args.length === 2) await memberPage(args[0], args[1], current);
    else show(el("p", {}, "No such page in the console. ", link("#/", "Start over")));
  } catch (e) {
    if (current()) {
      show(); // nothing of the page before stays under this page's title
      fail(e);
      status("");
    }
  }
}

function crumbs(page, args) {
  const parts = [link("#/", "Boards")];
  if (args.length > 0 && page !== "home") {
    parts.push("›", link(hash("board", args[0]), args[0]));
    if (page === "top") parts.push("›", el("span", {}, args.slice(1).join(" ")));
    if (page === "member") parts.push("›", el("span", {}, `member ${args[1]}`));
  }
  $("crumbs").replaceChildren(...parts.map((p) => (p instanceof Node ? p : el("span", { "aria-hidden": "true" }, p))));
}

// --- Home: the boards serve knows (GET /v1/boards), a page at a time ----------------------

const BOARDS_A_PAGE = 50;
const BOARD_HEADERS = [{ text: "board" }, { text: "periods" }, { text: "in Redis" }, { text: "config entry" }];

async function homePage(current) {
  status("Loading the boards…");
  const list = new BoardList(current);
  await list.more();
  if (!current()) return;
  show(el("h2", {}, "Boards"),
    el("p", {}, "The boards the config names and those Redis holds. Paste a token above when serve asks for one."),
    list.nodes());
  status("");
}

// The start page's list of boards: each page the API hands out is added below the last
// ("More boards" follows its cursor).
class BoardList {
  constructor(current) {
    this.current = current;
    this.cursor = null;
    this.rows = [];
    this.box = el("div", { id: "boards" });
    this.button = el("button", { type: "button", id: "more-boards", onclick: () => this.next() }, "More boards");
  }

  nodes() {
    return [this.box, el("div", { class: "row" }, this.button)];
  }

  async next() {
    $("error").textContent = "";
    try {
      await this.more();
    } catch (e) {
      this.button.disabled = false; // the same page can be asked for again
      fail(e);
    }
  }

  async more() {
    this.button.disabled = true;
    const data = await api("/v1/boards", { limit: BOARDS_A_PAGE, cursor: this.cursor });
    if (!this.current()) return;
    this.rows.push(...data.boards.map(boardRow));
    this.cursor = data.next_cursor;
    this.box.replaceChildren(this.rows.length
      ? table(BOARD_HEADERS, this.rows, { label: "Boards", cls: "boards" })
      : el("p", { class: "muted" }, "No boards yet: the config names none and Redis holds none."));
    this.button.disabled = this.cursor === null;
    this.button.hidden = this.cursor === null;
  }
}

// A board of the list: its name and periods link to its pages while a config entry covers it.
function boardRow(b) {
  const periods = b.periods.map((p) => link(hash("top", b.board, p), p));
  return el("tr", {},
    el("td", { class: "board" }, b.configured ? link(hash("board", b.board), b.board) : b.board),
    el("td", { class: "periods" }, periods.length ? periods.flatMap((a, i) => (i ? [" ", a] : [a])) : "—"),
    el("td", {}, b.in_redis ? "yes" : "no"),
    el("td", {}, b.configured ? b.entry : el("span", { class: "muted" }, "none (not served)")));
}

// --- A board: its periods, current and archived ------------------------------------------

async function boardPage(board, current) {
  status(`Loading ${board}…`);
  const info = await api(`${boardPath(board)}/periods`);
  if (!current()) return;
  const zone = info.timezone;
  const rows = info.periods.map((p) => el("tr", {},
    el("th", { scope: "row" }, p.period),
    el("td", {}, p.period_id === null ? "—" : link(hash("top", board, p.period, p.period_id), p.period_id)),
    el("td", {}, bound(p.period_start, zone)),
    el("td", {}, bound(p.period_end, zone)),
    el("td", { class: "num" }, count(p.members)),
    el("td", { class: "num" }, count(p.hot_members)),
    el("td", { class: "num" }, count(p.cold_members)),
  ));
  const lookup = memberForm("member-lookup", "Look a member up", (m) => { location.hash = hash("member", board, m); });
  const archived = el("section", { "aria-label": "Archived periods" }, el("h3", {}, "Archived periods"));
  show(
    el("h2", {}, `Board ${board}`),
    el("p", { class: "muted" }, `Time zone ${zone}`, zone === userZone ? "" : ` (second line: yours, ${userZone})`),
    table([{ text: "period" }, { text: "current id" }, { text: "starts" }, { text: "ends (next reset)" },
      { text: "members", cls: "num" }, { text: "hot", cls: "num" }, { text: "cold", cls: "num" }], rows,
    { label: "Current periods", cls: "periods" }),
    lookup,
    archived,
  );
  status("");
  for (const p of info.periods) {
    if (!current()) return;
    archived.append(await archivedList(board, p.period, zone, current));
  }
}

function memberForm(id, label, go) {
  const input = el("input", { id, name: "member", required: true, spellcheck: "false", placeholder: "member id" });
  const form = el("form", { class: "row", autocomplete: "off" },
    el("label", { for: id }, label), input, el("button", { type: "submit" }, "Go"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (input.value !== "") go(input.value);
  });
  return form;
}

async function archivedList(board, period, zone, current) {
  const box = el("div", { class: "card" }, el("h3", {}, period));
  const body = el("tbody");
  const more = el("button", { type: "button" }, "Older");
  let cursor = null;
  const load = async () => {
    more.disabled = true;
    try {
      const page = await api(`${periodPath(board, period)}/history`, { limit: 10, cursor });
      if (!current()) return;
      for (const a of page.periods) {
        body.append(el("tr", {},
          el("td", {}, link(hash("top", board, period, a.period_id), a.period_id)),
          el("td", {}, bound(a.period_start, zone)),
          el("td", {}, bound(a.period_end, zone)),
          el("td", { class: "num" }, count(a.members)),
          el("td", {}, when(a.archived_at, zone))));
      }
      cursor = page.next_cursor;
      more.disabled = cursor === null;
      more.hidden = cursor === null;
      if (!body.firstChild) box.append(el("p", { class: "muted" }, "Nothing archived yet."));
    } catch (e) {
      box.append(el("p", { class: "muted" }, e.message));
    }
  };
  more.addEventListener("click", load);
  box.append(el("div", { class: "scroll" }, el("table", { "aria-label": `Archived ${period} periods` },
    el("thead", {}, el("tr", {}, ["period id", "starts", "ends", "members", "archived at"].map((h) => el("th", { scope: "col" }, h)))),
    body)), more);
  await load();
  return box;
}

// --- A period's listing: cursor paging, look-up ----------------------------------------

// Where the row at 1-based `position` is stored: archived periods are all archived; an open
// period is hot up to its hot count (the members Redis holds) and cold beyond, which is
// exact for the hot part (listed before every spilled member) and counts a member brought
// back to Redis since the last tick by its position. (The board's tiers, the operator's
// named rules, are the API's "tier" field: a column of their own.)
function storeOf(view, position) {
  if (view.state === "archived") return "archived";
  if (!view.counts) return null;
  if (view.counts.cold_members === 0) return "hot";
  return position <= view.counts.hot_members ? "hot" : "cold";
}

// Records of a board with tiers carry "tier" (a name, or null in none).
function tiered(records) {
  return records.some((r) => "tier" in r);
}

function recordRows(records, view, firstPosition, me) {
  const tiers = tiered(records);
  return records.map((r, i) => {
    const store = storeOf(view, firstPosition + i);
    return el("tr", { class: r.member === me ? "me" : null },
      el("td", { class: "num rank" }, r.rank),
      el("td", { class: "member" }, link(hash("member", view.board, r.member), r.member)),
      el("td", { class: "name" }, r.name === undefined ? "" : r.name),
      el("td", { class: "num points" }, count(r.points)),
      tiers ? el("td", { class: "tier" }, r.tier === null ? "–" : r.tier) : null,
      el("td", { class: "achieved" }, when(r.achieved_at, view.zone)),
      el("td", { class: "meta" }, metadata(r.metadata)),
      el("td", {}, store ? el("span", { class: `store ${store}` }, store) : "",
        r.unavailable ? el("span", { class: "muted" }, ` (${r.unavailable.join(", ")} unavailable)`) : ""));
  });
}

// The listing's columns: a "tier" column on boards with tiers.
function recordHeaders(records) {
  return [{ text: "rank", cls: "num" }, { text: "member" }, { text: "name" },
    { text: "points", cls: "num" }, tiered(records) ? { text: "tier" } : null,
    { text: "achieved at", cls: "achieved" }, { text: "metadata", cls: "meta" },
    { text: "store" }].filter((h) => h !== null);
}

async function topPage(args, current) {
  const [board, period, periodId] = args;
  status(`Loading ${board} ${period}…`);
  const info = await api(`${boardPath(board)}/periods`);
  if (!current()) return;
  const listing = new Listing(board, period, periodId, info, current);
  show(listing.nodes());
  keys = (e) => listing.key(e);
  await listing.load();
}

// One period's listing: a page at a time along the API's cursors. The cursors of the pages
// seen are kept, so Previous goes back without the API needing a backward cursor.
class Listing {
  constructor(board, period, periodId, info, current) {
    Object.assign(this, { board, period, periodId, current });
    this.kind = info.periods.find((p) => p.period === period);
    this.view = { board, zone: info.timezone, state: null, counts: null };
    this.limit = 25;
    this.cursors = [null]; // cursors[i]: the cursor of page i (null: the first)
    this.page = 0;
    this.heading = el("h2", {});
    this.facts = el("dl", { class: "facts" });
    this.prev = el("button", { type: "button", id: "prev", "aria-keyshortcuts": "p", onclick: () => this.go(-1) }, "← Previous");
    this.next = el("button", { type: "button", id: "next", "aria-keyshortcuts": "n", onclick: () => this.go(1) }, "Next →");
    this.where = el("span", { id: "page-label", class: "muted", "aria-live": "polite" });
    this.size = el("select", { id: "page-size", "aria-label": "Rows a page", onchange: () => this.resize() },
      PAGE_SIZES.map((n) => el("option", { value: n, selected: n === this.limit }, `${n} a page`)));
    this.rows = el("div", { id: "listing" });
  }

  nodes() {
    return [this.heading, this.facts, el("div", { class: "row" }, this.prev, this.next, this.size, this.where),
      memberForm("jump", "Jump to a member", (m) => this.jump(m)), this.rows,
      el("p", { class: "muted" }, "Keys: n next page, p previous page. Store: hot in Redis, cold spilled to PostgreSQL, archived in history.")];
  }

  async load() {
    this.prev.disabled = this.next.disabled = true;
    status("Loading…");
    const data = await api(`${periodPath(this.board, this.period)}/top`,
      { period_id: this.periodId, limit: this.limit, cursor: this.cursors[this.page] });
    if (!this.current()) return;
    this.view.state = data.state;
    // Hot and cold counts are the current period's (the API's discovery endpoint).
    const k = this.kind;
    this.view.counts = k && data.state !== "archived" && k.period_id === data.period_id ? k : null;
    this.showFacts(data);
    this.showPage(data);
    status("");
  }

  showFacts(data) {
    const { zone, counts } = this.view;
    this.heading.textContent = `${this.board} · ${this.period} ${data.period_id}`;
    this.facts.replaceChildren(
      el("dt", {}, "state"), el("dd", {}, data.state),
      el("dt", {}, "starts"), el("dd", {}, bound(data.period_start, zone)),
      el("dt", {}, "ends"), el("dd", {}, bound(data.period_end, zone)),
      el("dt", {}, "members"), el("dd", {}, count(data.total), counts
        ? ` (${count(counts.hot_members)} hot in Redis, ${count(counts.cold_members)} cold in PostgreSQL)` : ""));
  }

  showPage(data) {
    const first = this.page * this.limit + 1;
    this.rows.replaceChildren(table(recordHeaders(data.records), recordRows(data.records, this.view, first, null), { label: "Listing", cls: "listing" }));
    this.where.textContent = data.records.length
      ? `page ${this.page + 1}: rows ${first}–${first + data.records.length - 1}` : `page ${this.page + 1}: empty`;
    this.cursors[this.page + 1] = data.next_cursor;
    this.cursors.length = this.page + 2;
    this.prev.disabled = this.page === 0;
    this.next.disabled = data.next_cursor === null;
  }

  async go(delta) {
    $("error").textContent = "";
    this.page += delta;
    try {
      await this.load();
    } catch (e) {
      this.page -= delta; // stay where we were
      this.prev.disabled = this.page === 0;
      this.next.disabled = this.cursors[this.page + 1] === null;
      fail(e);
      status("");
    }
  }

  resize() {
    this.limit = Number(this.size.value);
    this.cursors.length = 1;
    this.page = 0;
    this.go(0);
  }

  async jump(member) {
    $("error").textContent = "";
    try {
      const data = await api(`${memberPath(this.board, this.period, member)}/around`, { period_id: this.periodId, k: 5 });
      if (!this.current()) return;
      this.rows.replaceChildren(
        el("p", {}, `Around ${member}: rank ${data.member.rank}. `,
          el("button", { type: "button", id: "back-to-page", onclick: () => this.go(0) }, "Back to the listing")),
        table(recordHeaders(data.records), recordRows(data.records, this.view, NaN, member), { label: "Around the member", cls: "listing around" }));
      this.where.textContent = `around ${member}`;
    } catch (e) {
      fail(e);
    }
  }

  key(e) {
    const t = e.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === "n" && !this.next.disabled) this.next.click();
    if (e.key === "p" && !this.prev.disabled) this.prev.click();
  }
}

let keys = null; // the listing's n/p keys, while it is shown
document.addEventListener("keydown", (e) => {
  if (keys && parseHash().page === "top") keys(e);
});

// --- A member: every period of the board, archived finishes, a chart --------------------

async function memberPage(board, member, current) {
  status(`Loading ${member}…`);
  const info = await api(`${boardPath(board)}/periods`);
  if (!current()) return;
  const live = el("section", { "aria-label": "Current periods" }, el("h3", {}, "Current periods"));
  const finishes = el("section", { "aria-label": "Archived finishes" }, el("h3", {}, "Archived finishes"));
  const chart = el("section", { class: "chart", "aria-label": "Chart" }, el("h3", {}, "Over the archived periods"));
  show(el("h2", {}, `Member ${member}`), live, chart, finishes);
  const view = { board, zone: info.timezone, state: "open", counts: null };
  await each(info.periods, 3, (p) => standingNow(view, p, member, live));
  if (!current()) return;
  const series = await archivedFinishes(view, info.periods, member, finishes, current);
  if (!current()) return;
  drawChartControls(chart, series);
  status("");
}

// The member's rank and neighbours in the current period of kind `p`.
async function standingNow(view, p, member, box) {
  const card = el("div", { class: "card" }, el("h4", {}, `${p.period} ${p.period_id || ""}`));
  box.append(card);
  if (p.period_id === null) {
    card.append(el("p", { class: "muted" }, "No current period."));
    return;
  }
  try {
    if (await cohortCard(view, p, member, card)) return;
    const data = await api(`${memberPath(view.board, p.period, member)}/around`, { period_id: p.period_id, k: 3 });
    card.append(
      el("p", {}, `Rank ${data.member.rank} of ${count(p.members)} with ${count(data.member.points)} points. `,
        link(hash("top", view.board, p.period, p.period_id), "listing")),
      table(recordHeaders(data.records), recordRows(data.records, view, NaN, member), { label: `Around in ${p.period}`, cls: "listing around" }));
  } catch (e) {
    card.append(el("p", { class: "muted" }, e.status === 404 ? "Not on this period." : e.message));
  }
}

// On a league board, the member's cohort with each row's zone; false (nothing shown) when the
// board is no league or the member has no seat in the period (404).
async function cohortCard(view, p, member, card) {
  let c;
  try {
    c = await api(`${memberPath(view.board, p.period, member)}/cohort`, { period_id: p.period_id });
  } catch (e) {
    if (e.status === 404) return false;
    throw e;
  }
  const me = c.member || { rank: "–", zone: "–" };
  const rows = c.records.map((r) => el("tr", { class: r.member === member ? "me" : null },
    el("td", { class: "num rank" }, r.rank),
    el("td", { class: "member" }, link(hash("member", view.board, r.member), r.member)),
    el("td", { class: "num points" }, count(r.points)),
    el("td", { class: `zone ${r.zone}` }, r.zone)));
  card.append(
    el("p", {}, `Cohort ${c.cohort} (${c.division}): rank ${me.rank} of ${c.records.length}, zone ${me.zone}.`),
    table([{ text: "rank", cls: "num" }, { text: "member" }, { text: "points", cls: "num" }, { text: "zone" }],
      rows, { label: `Cohort in ${p.period}`, cls: "listing cohort" }));
  return true;
}

// The member's finish in each kind's newest archived periods, as a table in `box`; returns
// the finishes per kind, oldest first, for the chart.
async function archivedFinishes(view, kinds, member, box, current) {
  const series = {};
  const rows = [];
  for (const p of kinds) {
    let periods = [];
    try {
      periods = (await api(`${periodPath(view.board, p.period)}/history`, { limit: ARCHIVED_SHOWN })).periods;
    } catch (e) {
      box.append(el("p", { class: "muted" }, `${p.period}: ${e.message}`));
      continue;
    }
    const found = await each(periods, 4, (a) => api(memberPath(view.board, p.period, member), { period_id: a.period_id })
      .catch((e) => { if (e.status === 404) return null; throw e; }));
    if (!current()) return series;
    series[p.period] = [];
    periods.forEach((a, i) => {
      const r = found[i];
      if (r) series[p.period].unshift({ id: a.period_id, rank: r.rank, points: r.points, of: a.members });
      rows.push(el("tr", {},
        el("td", {}, p.period),
        el("td", {}, link(hash("top", view.board, p.period, a.period_id), a.period_id)),
        el("td", { class: "num rank" }, r ? r.rank : "—"),
        el("td", { class: "num" }, count(a.members)),
        el("td", { class: "num" }, r ? count(r.points) : "not on it"),
        el("td", {}, r ? when(r.achieved_at, view.zone) : "")));
    });
  }
  box.append(rows.length
    ? table([{ text: "period" }, { text: "id" }, { text: "rank", cls: "num" }, { text: "of", cls: "num" },
      { text: "points", cls: "num" }, { text: "achieved at" }], rows, { label: "Archived finishes", cls: "finishes" })
    : el("p", { class: "muted" }, "No archived periods yet."));
  return series;
}

function drawChartControls(box, series) {
  const kinds = Object.keys(series).filter((k) => series[k].length > 0);
  if (kinds.length === 0) {
    box.append(el("p", { class: "muted" }, "No archived finish to draw."));
    return;
  }
  const kind = el("select", { id: "chart-period", "aria-label": "Period kind" }, kinds.map((k) => el("option", { value: k }, k)));
  const measure = el("select", { id: "chart-measure", "aria-label": "Measure" },
    el("option", { value: "rank" }, "rank"), el("option", { value: "points" }, "points"));
  const holder = el("div");
  const redraw = () => holder.replaceChildren(chartSvg(series[kind.value], measure.value, kind.value));
  kind.addEventListener("change", redraw);
  measure.addEventListener("change", redraw);
  box.append(el("div", { class: "row" }, kind, measure), holder);
  redraw();
}

// A line of the member's rank (1 at the top) or points over the periods, oldest left.
function chartSvg(points, measure, kind) {
  const W = 600, H = 220, L = 56, R = 16, T = 16, B = 40;
  const values = points.map((p) => p[measure]);
  let lo = Math.min(...values), hi = Math.max(...values);
  if (lo === hi) { lo -= 1; hi += 1; }
  const x = (i) => (points.length === 1 ? (L + W - R) / 2 : L + (i * (W - L - R)) / (points.length - 1));
  // Rank: smaller is better, drawn higher.
  const y = (v) => (measure === "rank" ? T + ((v - lo) * (H - T - B)) / (hi - lo) : H - B - ((v - lo) * (H - T - B)) / (hi - lo));
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `${measure} in ${kind} periods, oldest first` });
  s.append(svg("title", {}, `${measure} in ${kind} periods`));
  s.append(svg("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }));
  s.append(svg("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }));
  for (const v of [lo, hi]) s.append(svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, Number.isInteger(v) ? v : v.toFixed(1)));
  if (points.length > 1) {
    s.append(svg("polyline", { class: "line", points: points.map((p, i) => `${x(i)},${y(p[measure])}`).join(" ") }));
  }
  const step = Math.max(1, Math.ceil(points.length / 6));
  points.forEach((p, i) => {
    const dot = svg("circle", { class: "dot", cx: x(i), cy: y(p[measure]), r: 4 });
    dot.append(svg("title", {}, `${p.id}: rank ${p.rank} of ${p.of}, ${p.points} points`));
    s.append(dot);
    if (i % step === 0 || i === points.length - 1) {
      s.append(svg("text", { x: x(i), y: H - B + 16, "text-anchor": "middle" }, p.id));
    }
  });
  s.append(svg("text", { x: 4, y: 12 }, measure === "rank" ? "rank (1 on top)" : "points"));
  return s;
}

// --- The token: sessionStorage, the Authorization header, never a URL --------------------

function tokenState() {
  $("token-state").textContent = sessionStorage.getItem(TOKEN_KEY) ? "token set (this tab only)" : "no token";
}

function start() {
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const t = $("token").value.trim();
    if (t) sessionStorage.setItem(TOKEN_KEY, t);
    $("token").value = "";
    tokenState();
    render();
  });
  $("forget").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    tokenState();
    render();
  });
  window.addEventListener("hashchange", () => {
    render().then(() => $("main").focus({ preventScroll: true }));
  });
  tokenState();
  render();
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
