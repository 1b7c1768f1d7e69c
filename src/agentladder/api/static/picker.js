// agentladder dashboard: the agent picker. Choose agents (filter by tag), see the cost of
// the chosen scope, POST /deliberation, then poll GET /deliberation/{id} until it settles.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const ROUNDS = JSON.parse($("scope-rounds").textContent);
  const FOLLOW_MS = 500;
  const rows = () => Array.from(document.querySelectorAll("#picker-table tr[data-agent]"));
  const picked = () => rows().filter((row) => row.querySelector("input").checked);
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  // dollars: four decimals, more below a cent so that two significant digits show
  // ($0.00042, not $0.0004), as the server writes them (api/render.py, money)
  const money = (value) => {
    const size = Math.abs(value);
    const digits = size > 0 && size < 0.01 ? Math.max(4, 1 - Math.floor(Math.log10(size))) : 4;
    return "$" + value.toFixed(digits);
  };
  const number = (value, digits) => (value === null || value === undefined ? "—" : value.toFixed(digits));

  const ticked = new Set(); // the agents ticked, kept across the rows' live refreshes

  function update() {
    ticked.clear();
    picked().forEach((row) => ticked.add(row.dataset.agent));
    const tag = $("picker-tag").value;
    rows().forEach((row) => {
      const checked = row.querySelector("input").checked;
      row.hidden = !checked && tag !== "" && !row.dataset.tags.split(" ").includes(tag);
    });
    const chosen = picked();
    const rounds = ROUNDS[$("scope").value] || 1;
    const perRound = chosen.reduce((sum, row) => sum + Number(row.dataset.cost), 0);
    $("chosen-count").textContent = String(chosen.length);
    $("total-cost").textContent = money(perRound * rounds);
    $("cost-formula").textContent = "(" + money(perRound) + " per round for the "
      + chosen.length + " chosen × " + rounds + " round" + (rounds === 1 ? "" : "s") + ")";
  }

  function settled(record) {
    const done = (effect) => ["applied", "skipped", "abandoned"].includes(effect.state);
    if (record.status === "failed") return true;
    return record.status === "completed" && done(record.ranking) && done(record.judgments);
  }

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  function renderRound(round) {
    const box = el("div", undefined, "follow-round");
    box.dataset.round = String(round.number);
    box.appendChild(el("h3", "Round " + round.number));
    const table = el("table", undefined, "data compact");
    const head = table.createTHead().insertRow();
    ["Agent", "Score", "Latency ms", "Evaluations"].forEach((t) => head.appendChild(el("th", t)));
    const body = table.createTBody();
    round.proposals.forEach((p) => {
      const row = body.insertRow();
      row.dataset.agent = p.agent_id;
      row.appendChild(el("td", p.agent_id));
      row.appendChild(el("td", p.error ? p.error : number(p.aggregated_score, 2), "num"));
      row.appendChild(el("td", number(p.latency_ms, 0), "num"));
      row.appendChild(el("td", p.evaluations.map((e) => e.evaluator + " "
        + (e.error ? "failed" : number(e.score, 1))).join(", ")));
    });
    box.appendChild(table);
    $("follow-rounds").appendChild(box);
  }

  function summarize(record, total) {
    const parts = [record.rounds.length + " of " + total + " rounds"];
    if (record.result) parts.push("best proposal " + record.result.agent_id + " ("
      + number(record.result.aggregated_score, 2) + ")");
    if (record.status === "completed") {
      parts.push("ranking " + record.ranking.state);
      if (record.ranking.promoted.length) parts.push("promoted " + record.ranking.promoted.join(", "));
      parts.push("judgments " + record.judgments.state);
    }
    parts.push("cost " + money(record.total_cost || 0));
    if (record.error) parts.push("error: " + record.error);
    $("follow-summary").textContent = parts.join(" · ");
    $("spent").hidden = false;
    $("spent-label").textContent = settled(record) ? "in the end" : "so far";
    $("spent-cost").textContent = money(record.total_cost || 0);
  }

  async function follow(id, total) {
    $("follow").hidden = false;
    $("follow-rounds").replaceChildren();
    $("follow-link").textContent = id;
    $("follow-link").href = "/dashboard/deliberations/" + encodeURIComponent(id);
    let shown = 0;
    for (;;) {
      try {
        const response = await fetch("/deliberation/" + encodeURIComponent(id), { cache: "no-store" });
        if (!response.ok) throw new Error("HTTP " + response.status);
        const record = await response.json();
        $("follow-status").textContent = record.status;
        $("follow-status").className = "state " + record.status;
        for (; shown < record.rounds.length; shown += 1) renderRound(record.rounds[shown]);
        summarize(record, total);
        if (settled(record)) {
          $("follow").dataset.settled = "";
          return;
        }
      } catch (error) {
        $("follow-summary").textContent = "server not answering (" + error.message + "), retrying";
      }
      await sleep(FOLLOW_MS);
    }
  }

  // The form's fields by the API's field names: a refusal naming one is told in the
  // field's words, and the field is marked (a 401 or 403: the token field).
  const FIELDS = {
    agent_names: ["the agents ticked in the table", "picker-table"],
    user_query: ["Question", "user-query"],
    scope: ["Scope", "scope"],
    task_type: ["Task type", "task-type"],
    complexity: ["Complexity", "complexity"],
    min_agent_rank: ["Minimum rank", "min-rank"],
    count: ["Agents (auto-select)", "route-count"],
    strategy: ["Strategy", "route-strategy"],
    tags: ["Filter by tag", "picker-tag"],
    quality_floor: ["Quality floor", "route-floor"],
    quality_floor_share: ["share of the best", "route-floor-share"],
    confidence: ["Confidence", "route-confidence"],
    max_cost_per_round: ["Max cost / round per agent", "route-budget"],
  };

  // pydantic's phrases in the form's words: "choose at least 2 agents (1 chosen)".
  function inWords(reason, field) {
    const fewer = /^(?:Tuple|List) should have at least (\d+) items? after validation, not (\d+)$/
      .exec(reason);
    if (fewer) return field === "agent_names" ? "choose at least " + fewer[1] + " agents ("
      + fewer[2] + " chosen)" : "give at least " + fewer[1] + " (" + fewer[2] + " given)";
    if (/^String should have at least 1 character$/.test(reason)) return "cannot be empty";
    return reason.replace(/^Input should be less than or equal to /, "must be at most ")
      .replace(/^Input should be greater than or equal to /, "must be at least ")
      .replace(/^Input should be greater than /, "must be more than ")
      .replace(/^Input should be less than /, "must be less than ");
  }

  function unmark() {
    document.querySelectorAll("#picker [aria-invalid]").forEach((field) => {
      field.removeAttribute("aria-invalid");
    });
  }

  function mark(id) {
    const field = $(id);
    if (!field) return;
    field.setAttribute("aria-invalid", "true");
    if (typeof field.focus === "function") field.focus();
  }

  function explain(body, status) {
    const error = (body && body.error) || {};
    let message = (error.message || "refused") + " (HTTP " + status + ")";
    unmark();
    if (status === 401 || status === 403) {
      message = "API token: " + message;  // the field to fix, as for the others
      mark("token");
    } else if (error.field) {
      const name = String(error.field).split(".")[0];
      const known = FIELDS[name];
      if (known) {
        const reason = String(error.message || "").replace(error.field + ": ", "");
        message = known[0] + ": " + inWords(reason, name) + " (HTTP " + status + ")";
        mark(known[1]);
      }
    }
    if (Array.isArray(error.excluded) && error.excluded.length) {
      message += "; excluded: " + error.excluded.map((x) => (typeof x === "string" ? x
        : x.rank === undefined ? x.agent_id + " (" + x.reason + ": " + x.detail + ")"
        : x.agent_id + " (rank " + x.rank + ", " + x.reason + (x.detail ? ": " + x.detail : "") + ")")).join(", ");
    }
    return message;
  }

  function showRouting(out) {
    const box = $("route-why");
    box.replaceChildren();
    const floor = out.quality_floor === null || out.quality_floor === undefined ? ""
      : ", floor " + out.quality_floor.toFixed(2) + " cleared with probability "
        + out.confidence + (out.reference ? " (best available: " + out.reference.agent_id + ")" : "");
    const found = el("p", out.strategy + " chose " + out.agents.length + " agents (seed "
      + out.seed + ", " + money(out.estimated_cost_per_round) + " per round" + floor + "):");
    found.id = "route-summary";
    box.appendChild(found);
    const chosen = el("ul", undefined, "route-chosen");
    out.agents.forEach((p) => {
      const item = el("li", p.agent_id + ": " + p.detail);
      item.dataset.agent = p.agent_id;
      chosen.appendChild(item);
    });
    box.appendChild(chosen);
    if (out.excluded.length) {
      box.appendChild(el("p", "Not chosen:"));
      const others = el("ul", undefined, "route-excluded");
      out.excluded.forEach((x) => {
        const item = el("li", x.agent_id + ": " + x.reason + " (" + x.detail + ")");
        item.dataset.agent = x.agent_id;
        others.appendChild(item);
      });
      box.appendChild(others);
    }
  }

  $("auto-select").addEventListener("click", async () => {
    $("picker-error").textContent = "";
    unmark();
    const request = {
      count: Number($("route-count").value || 2),
      strategy: $("route-strategy").value,
      min_agent_rank: Number($("min-rank").value || 0),
    };
    if ($("task-type").value) request.task_type = $("task-type").value;
    if ($("complexity").value) request.complexity = $("complexity").value;
    if ($("picker-tag").value) request.tags = [$("picker-tag").value];
    if ($("route-floor").value) request.quality_floor = Number($("route-floor").value);
    if ($("route-floor-share").value) {
      request.quality_floor_share = Number($("route-floor-share").value);
    }
    if ($("route-confidence").value) request.confidence = Number($("route-confidence").value);
    if ($("route-budget").value) request.max_cost_per_round = Number($("route-budget").value);
    const headers = { "Content-Type": "application/json", Accept: "application/json" };
    if ($("token").value) headers.Authorization = "Bearer " + $("token").value;
    try {
      const response = await fetch("/route", {
        method: "POST", headers: headers, body: JSON.stringify(request),
      });
      const body = await response.json().catch(() => null);
      if (response.status !== 200) {
        $("picker-error").textContent = explain(body, response.status);
        return;
      }
      const names = new Set(body.agents.map((p) => p.agent_id));
      rows().forEach((row) => { row.querySelector("input").checked = names.has(row.dataset.agent); });
      update();
      showRouting(body);
    } catch (error) {
      $("picker-error").textContent = "the server did not answer: " + error.message;
    }
  });

  $("picker").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("picker-error").textContent = "";
    unmark();
    const request = {
      user_query: $("user-query").value,
      agent_names: picked().map((row) => row.dataset.agent),
      scope: $("scope").value,
      min_agent_rank: Number($("min-rank").value || 0),
    };
    if ($("task-type").value) request.task_type = $("task-type").value;
    if ($("complexity").value) request.complexity = $("complexity").value;
    const headers = { "Content-Type": "application/json", Accept: "application/json" };
    if ($("token").value) headers.Authorization = "Bearer " + $("token").value;
    $("start").disabled = true;
    try {
      const response = await fetch("/deliberation", {
        method: "POST", headers: headers, body: JSON.stringify(request),
      });
      const body = await response.json().catch(() => null);
      if (response.status !== 202) {
        $("picker-error").textContent = explain(body, response.status);
        return;
      }
      follow(body.deliberation_id, ROUNDS[request.scope] || 1);
    } catch (error) {
      $("picker-error").textContent = "the server did not answer: " + error.message;
    } finally {
      $("start").disabled = false;
    }
  });
  // The rows refresh live (rank, level, status: static/dashboard.js); the choice stays.
  $("picker-rows").addEventListener("live:update", () => {
    rows().forEach((row) => { row.querySelector("input").checked = ticked.has(row.dataset.agent); });
    update();
  });
  $("picker-tag").addEventListener("input", update);
  $("scope").addEventListener("input", update);
  $("picker-table").addEventListener("change", update);
  $("pick-shown").addEventListener("click", () => {
    rows().filter((row) => !row.hidden).forEach((row) => { row.querySelector("input").checked = true; });
    update();
  });
  $("pick-none").addEventListener("click", () => {
    rows().forEach((row) => { row.querySelector("input").checked = false; });
    update();
  });
  update();
})();
