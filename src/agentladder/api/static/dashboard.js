// agentladder dashboard: live parts of the page and the sortable, filterable agent table.
// Live refresh: every data-poll-ms (2 s) the page fetches its own URL and, for each
// element marked data-live (it has an id), swaps in the fresh copy's content when it
// changed, then fires "live:update" on it. A part holding [data-settled] (a finished
// deliberation) is left alone. No reload, no framework, no build step.
(function () {
  "use strict";
  const POLL_MS = Number(document.body.dataset.pollMs) || 2000;
  const status = document.getElementById("live-status");
  const live = Array.from(document.querySelectorAll("[data-live][id]"));
  const last = new Map();
  const settled = (el) => el.hasAttribute("data-settled") || el.querySelector("[data-settled]");

  async function refresh(parts) {
    const response = await fetch(location.href, { cache: "no-store", headers: { Accept: "text/html" } });
    if (!response.ok) throw new Error("HTTP " + response.status);
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    parts.forEach((el) => {
      const copy = fresh.getElementById(el.id);
      if (!copy || copy.innerHTML === last.get(el.id)) return;
      last.set(el.id, copy.innerHTML);
      el.innerHTML = copy.innerHTML;
      el.dispatchEvent(new CustomEvent("live:update", { bubbles: true }));
    });
  }

  async function tick() {
    const active = live.filter((el) => !settled(el));
    if (!active.length) {
      status.textContent = "";
      return;
    }
    if (!document.hidden) {
      try {
        await refresh(active);
        status.textContent = "live · updated " + new Date().toISOString().slice(11, 19) + " UTC";
        status.classList.remove("stale");
      } catch (error) {
        status.textContent = "live · server not answering, retrying";
        status.classList.add("stale");
      }
    }
    setTimeout(tick, POLL_MS);
  }
  live.forEach((el) => last.set(el.id, el.innerHTML));
  if (live.some((el) => !settled(el))) {
    status.textContent = "live";
    setTimeout(tick, POLL_MS);
  }

  // A wide table's box that scrolls sideways says so above it (and, at its end, that the
  // first columns are back to the left); checked again on resize and after a live swap.
  function cue(box) {
    let hint = box.previousElementSibling;
    if (!hint || !hint.classList.contains("scroll-cue")) {
      hint = document.createElement("p");
      hint.className = "scroll-cue";
      box.before(hint);
      box.addEventListener("scroll", () => cue(box), { passive: true });
    }
    const over = box.scrollWidth > box.clientWidth + 1;
    const end = box.scrollLeft + box.clientWidth >= box.scrollWidth - 1;
    box.classList.toggle("overflowing", over);
    box.classList.toggle("at-end", over && end);
    hint.classList.toggle("shown", over);
    hint.textContent = !over ? "" : end ? "← scroll back for the first columns"
      : "scroll sideways for more columns →";
  }
  const cues = () => document.querySelectorAll(".scroll").forEach(cue);
  cues();
  window.addEventListener("resize", cues);
  document.addEventListener("live:update", cues);

  const table = document.getElementById("agent-table");
  if (!table) return;
  const body = document.getElementById("agent-rows");
  const text = document.getElementById("filter-text");
  const tag = document.getElementById("filter-tag");
  const state = document.getElementById("filter-status");
  const count = document.getElementById("agent-count");
  let sortKey = null;
  let numeric = false;
  let direction = 1;

  const value = (row, key) => {
    const cell = row.querySelector('[data-col="' + key + '"]');
    return cell ? cell.dataset.value || "" : "";
  };
  function compare(a, b) {
    const x = value(a, sortKey);
    const y = value(b, sortKey);
    let order;
    if (numeric && (x === "" || y === "")) return (x === "") - (y === ""); // blanks last
    if (numeric) order = Number(x) - Number(y);
    else order = x.localeCompare(y);
    return direction * order || a.dataset.agent.localeCompare(b.dataset.agent);
  }
  function addTags(rows) {
    const known = new Set(Array.from(tag.options, (o) => o.value));
    rows.flatMap((r) => r.dataset.tags.split(" ")).filter((t) => t && !known.has(t))
      .forEach((t) => { known.add(t); tag.add(new Option(t, t)); });
  }
  function apply() {
    const rows = Array.from(body.querySelectorAll("tr[data-agent]"));
    if (sortKey) rows.sort(compare).forEach((row) => body.appendChild(row));
    addTags(rows);
    const query = text.value.trim().toLowerCase();
    let shown = 0;
    rows.forEach((row) => {
      const ok = (!query || row.dataset.search.includes(query))
        && (!tag.value || row.dataset.tags.split(" ").includes(tag.value))
        && (!state.value || row.dataset.status === state.value);
      row.hidden = !ok;
      shown += ok ? 1 : 0;
    });
    count.textContent = shown + " of " + rows.length + " agents";
  }
  table.querySelectorAll("th button[data-sort]").forEach((button) => {
    button.addEventListener("click", () => {
      if (sortKey === button.dataset.sort) direction = -direction;
      else {
        sortKey = button.dataset.sort;
        numeric = button.hasAttribute("data-numeric");
        direction = numeric ? -1 : 1; // numbers: highest first
      }
      table.querySelectorAll("th").forEach((th) => th.removeAttribute("aria-sort"));
      button.parentElement.setAttribute("aria-sort", direction > 0 ? "ascending" : "descending");
      apply();
    });
  });
  [text, tag, state].forEach((el) => el.addEventListener("input", apply));
  body.addEventListener("live:update", apply);
  apply();
})();
