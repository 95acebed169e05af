// The card table's script: marks what a pick can match, plays a move in place (the form posts
// with fetch and the server answers with the table fragment alone), and swaps in the new
// table when the game moves on, keeping the cards picked and a half-typed turn. The page
// works without it: every form is a plain POST and dos.js reloads the page instead.
// The words it shows come from the page (the fragment's JSON block), never from here.

const PART = {"X-DOS-Part": "table"};
const body = document.body;
const waitUrl = body.dataset.wait;
let busy = false;  // a move is on its way: a second tap waits for its answer

function words() {
  const block = document.getElementById("table-data");
  try {
    return block ? JSON.parse(block.textContent) : {matches: [], words: {}};
  } catch (error) {
    return {matches: [], words: {}};
  }
}

function picked() {
  return Array.from(document.querySelectorAll("#play .pick:checked"), (box) => box.value);
}

const key = (codes) => codes.slice().sort().join("+");

// Marks the Center Row cards the picked cards can match, and with one card picked, the hand
// cards that would complete a double match; says what to do next in the prompt.
function mark() {
  const data = words();
  const pick = picked();
  const chosen = key(pick);
  const fits = new Set();
  const pairs = new Set();
  for (const [position, cards] of data.matches) {
    if (pick.length && key(cards) === chosen) { fits.add(String(position)); }
    if (pick.length === 1 && cards.length === 2) {
      const rest = cards.slice();
      const at = rest.indexOf(pick[0]);
      if (at >= 0) { rest.splice(at, 1); pairs.add(rest[0]); }
    }
  }
  document.querySelectorAll("#play button.cr-card").forEach((button) => {
    const on = fits.has(button.dataset.pos);
    button.classList.toggle("fits", on);
    let note = button.querySelector(".fit-note");
    if (on && !note) {
      note = document.createElement("span");
      note.className = "visually-hidden fit-note";
      note.textContent = " (" + (data.words.fits || "") + ")";
      button.append(note);
    } else if (!on && note) {
      note.remove();
    }
  });
  document.querySelectorAll("#play .pick").forEach((box) => {
    const label = box.nextElementSibling;
    const on = !box.checked && pairs.has(box.value);
    if (label) {
      label.classList.toggle("pairs", on);
      label.title = on ? (data.words.pairs || "") : "";
    }
  });
  const prompt = document.getElementById("prompt");
  if (!prompt) { return; }
  if (!prompt.dataset.first) { prompt.dataset.first = prompt.innerHTML; }
  if (!pick.length || !data.matches.length) {
    prompt.innerHTML = prompt.dataset.first;  // the server's words, with their card chips
  } else if (fits.size) {
    prompt.textContent = pick.length === 1 && pairs.size ? data.words.one : data.words.two;
  } else if (pick.length === 1 && pairs.size) {
    prompt.textContent = data.words.one;
  } else {
    prompt.textContent = data.words.none;
  }
}

function announce(table, own) {
  const live = document.getElementById("live");
  if (!live) { return; }
  const lines = [];
  const played = table.querySelector(".played");
  if (played) { lines.push(played.textContent.trim()); }
  if (!own) {
    table.querySelectorAll("#since li").forEach((item) => lines.push(item.textContent.trim()));
  }
  const status = table.querySelector("#status");
  if (status) { lines.push(status.textContent.replace(/\s+/g, " ").trim()); }
  live.textContent = lines.join(". ").replace(/\.\./g, ".");
}

// A time shown in UTC because the reader chose no zone: in the browser's zone and the
// page's language, with the zone's name (as dos.js does on the first load).
function localTimes(root) {
  const lang = document.documentElement.lang || undefined;
  try {  // a language whose dates the browser does not know: the server's words stay
    if (lang && !Intl.DateTimeFormat.supportedLocalesOf([lang]).length) { return; }
  } catch (error) {
    return;
  }
  let zone = "UTC";
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC"; } catch (error) { zone = "UTC"; }
  root.querySelectorAll("time[data-local]").forEach((el) => {
    const when = new Date(el.getAttribute("datetime"));
    if (isNaN(when)) { return; }
    try {
      el.textContent = when.toLocaleString(lang, {dateStyle: "full", timeStyle: "short"})
        + " (" + zone + ")";
    } catch (error) {
      el.textContent = when.toLocaleString();
    }
  });
}

// What the player holds on the page that the new table must keep.
function held() {
  const box = document.getElementById("turn");
  const active = document.activeElement;
  return {
    cards: picked(),
    typed: box ? box.value : "",
    typing: box !== null && box === active,
    range: box && box === active ? [box.selectionStart, box.selectionEnd] : null,
    focus: active && active !== body && document.getElementById("table")?.contains(active)
      ? describe(active) : null,
  };
}

function describe(el) {
  if (el.id) { return "#" + CSS.escape(el.id); }
  if (el.name) {
    return el.tagName.toLowerCase() + "[name=\"" + CSS.escape(el.name) + "\"][value=\""
      + CSS.escape(el.value) + "\"]";
  }
  return null;
}

function swap(html, keep, own) {
  const fresh = new DOMParser().parseFromString(html, "text/html").getElementById("table");
  const old = document.getElementById("table");
  if (!fresh || !old) { window.location.reload(); return; }
  const newer = Number(fresh.dataset.version) - Number(body.dataset.version);
  if (newer < 0 || (newer === 0 && !own)) { return; }  // a late answer, or the table shown
  const table = document.adoptNode(fresh);
  old.replaceWith(table);
  body.dataset.version = table.dataset.version;
  if (table.dataset.title) { document.title = table.dataset.title; }
  if (keep && keep.cards.length) {  // tick the same cards again, each as often as it was
    const left = keep.cards.slice();
    table.querySelectorAll("#play .pick").forEach((box) => {
      const at = left.indexOf(box.value);
      if (at >= 0 && !box.checked) { box.checked = true; left.splice(at, 1); }
    });
  }
  const box = document.getElementById("turn");
  if (keep && box && keep.typed && !box.value) { box.value = keep.typed; }
  localTimes(table);
  mark();
  let target = null;
  if (keep && keep.typing && box) {
    target = box;
  } else if (keep && keep.focus) {
    target = table.querySelector(keep.focus);
  }
  if (!target && own) {  // after a move, the keyboard carries on from the hand
    target = table.querySelector("#play .pick, #play button:not([disabled]), button.move");
  }
  if (target) {
    target.focus({preventScroll: true});
    if (target === box && keep.range) { box.setSelectionRange(keep.range[0], keep.range[1]); }
  }
  announce(table, own);
}

async function send(form, submitter) {
  const data = new FormData(form, submitter);
  const keep = held();
  keep.cards = [];  // the move used them (a refused pick comes back ticked by the server)
  const response = await fetch(form.action, {
    method: "POST", body: new URLSearchParams(data), headers: PART,
    credentials: "same-origin", cache: "no-store",
  });
  if (response.headers.get("X-DOS-Part") !== "table") {  // an error page, a sign-in: show it
    window.location.reload();
    return;
  }
  swap(await response.text(), keep, true);
}

document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.closest("#table")
      || !form.action.endsWith("/move")) { return; }
  event.preventDefault();
  if (busy) { return; }
  busy = true;
  document.getElementById("table")?.setAttribute("aria-busy", "true");
  send(form, event.submitter).catch(() => form.submit()).finally(() => { busy = false; });
});

document.addEventListener("change", (event) => {
  if (event.target instanceof HTMLInputElement && event.target.classList.contains("pick")) {
    mark();
  }
});

async function refresh() {
  const response = await fetch(window.location.pathname, {
    headers: PART, credentials: "same-origin", cache: "no-store",
  });
  if (response.headers.get("X-DOS-Part") !== "table") { throw new Error("no table"); }
  const keep = held();
  const html = await response.text();
  if (busy) { return; }  // our own move's answer brings the table
  swap(html, keep, false);
}

async function poll() {
  for (;;) {
    if (busy) { await new Promise((resolve) => window.setTimeout(resolve, 200)); continue; }
    try {
      const response = await fetch(waitUrl + "?version=" + encodeURIComponent(body.dataset.version),
        {credentials: "same-origin", cache: "no-store"});
      if (!response.ok) { throw new Error(String(response.status)); }
      const data = await response.json();
      // A move of ours wakes the wait with its commit: its own answer brings that table.
      while (busy) { await new Promise((resolve) => window.setTimeout(resolve, 50)); }
      if (data.changed && Number(data.version) > Number(body.dataset.version)) { await refresh(); }
    } catch (error) {
      await new Promise((resolve) => window.setTimeout(resolve, 10000));
    }
  }
}

mark();
if (waitUrl) { poll(); }
