// The UI's only script: start and cancel runs, follow a run live (Server-Sent Events), watch a session.
"use strict";
(function () {
  const $ = (sel, root) => (root || document).querySelector(sel);
  const esc = (s) => String(s == null ? "" : s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
  const message = async (r) => {
    try { const b = await r.json(); return (b.detail || []).map((d) => d.msg).join("; ") || r.statusText; }
    catch (e) { return r.statusText; }
  };
  const post = (url, body, headers) => fetch(url, {method: "POST", credentials: "same-origin",
    headers: Object.assign({"Content-Type": "application/json"}, headers || {}), body: JSON.stringify(body || {})});

  const start = $("#start-run");
  if (start) start.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = new FormData(start);
    const body = {agent: f.get("agent") || "reference", jobs: Number(f.get("jobs") || 1), axis2: f.get("axis2") === "on"};
    if (f.get("pack")) body.packs = [f.get("pack")];
    if (f.get("mode")) body.mode = f.get("mode");
    const r = await post("/api/runs", body);
    if (r.status !== 201) { $("#start-error").textContent = await message(r); return; }
    location.href = "/ui/runs/" + encodeURIComponent((await r.json()).run_id);
  });

  const compare = $("#compare-form");
  if (compare) compare.addEventListener("submit", (ev) => {
    const f = new FormData(compare);
    if (!f.get("a") || !f.get("b")) { ev.preventDefault(); alert("pick run A and run B"); }
  });

  const progress = $("#progress");
  if (progress && progress.dataset.live === "true") {
    const runId = progress.dataset.runId;
    const tbody = $("#tests tbody");
    let total = 0, done = 0, counts = null;
    // The words of the console's progress line and of the run's totals line.
    const show = () => {
      $(".bar", progress).style.width = (total ? Math.round(100 * done / total) : 0) + "%";
      $("#progress-text").textContent = done + " / " + total + " results" + (counts ?
        " · " + counts.passed + " passed · " + counts.failed + " failed · " + counts.errored + " errored" : "");
      // The header's totals line follows each result too (the console's words), not only the final page.
      const totals = $("#totals");
      if (counts && totals) {
        ["total", "passed", "failed", "errored"].forEach((k) => { totals.dataset[k] = counts[k]; });
        $("#totals-words").textContent = counts.total + " results · " + counts.passed + " passed · " +
          counts.failed + " failed · " + counts.errored + " errored";
        const graded = counts.passed + counts.failed;
        $("#pass-rate").textContent = graded ? (100 * counts.passed / graded).toFixed(1) + "%" : "n/a";
      }
    };
    const row = (id) => Array.from(tbody.rows).find((tr) => tr.dataset.testId === id);
    // A failed gate in the console's words (`reporters.base.failed_gates`): `expect to_be (soft): …`.
    const gateLine = (s) => s.kind + " " + s.name + (s.soft ? " (soft)" : "") + (s.message ? ": " + s.message.split("\n")[0] : "");
    // The summary cards and their charts, as the server renders them from the results stored so far: fetched
    // at most once a second while results arrive.
    let pending = null;
    const refreshSections = () => {
      if (pending) return;
      pending = setTimeout(async () => {
        try {
          const r = await fetch(location.pathname, {credentials: "same-origin"});
          const fresh = new DOMParser().parseFromString(await r.text(), "text/html").querySelector("#sections");
          if (r.ok && fresh && $("#sections")) $("#sections").innerHTML = fresh.innerHTML;
        } finally { pending = null; }
      }, 1000);
    };
    const es = new EventSource("/api/runs/" + encodeURIComponent(runId) + "/events");
    es.addEventListener("run_started", (e) => { total = JSON.parse(e.data).total; done = 0; show(); });
    es.addEventListener("test_started", (e) => {
      const d = JSON.parse(e.data);
      if (row(d.test_id)) return;
      const tr = tbody.insertRow(); tr.dataset.testId = d.test_id;
      tr.innerHTML = "<td>" + esc(d.name) + "</td><td><span class='badge running'>running</span></td><td></td><td></td><td></td><td></td><td></td>";
    });
    es.addEventListener("test_finished", (e) => {
      const d = JSON.parse(e.data);
      const tr = row(d.test_id) || tbody.insertRow(); tr.dataset.testId = d.test_id; tr.className = d.status;
      const failed = (d.signals || []).find((s) => s.role === "gate" && s.passed === false);
      const href = "/ui/runs/" + encodeURIComponent(runId) + "/tests/" + encodeURIComponent(d.test_id);
      tr.innerHTML = "<td><a href='" + href + "'>" + esc(d.name) + "</a></td><td><span class='badge " + esc(d.status) + "'>" + esc(d.status) +
        "</span></td><td class='num'>" + (d.score == null ? "—" : d.score.toFixed(2)) + "</td><td></td><td></td><td class='reason'>" +
        (failed ? "<span class='check' data-check='" + esc(failed.name) + "'>" + esc(gateLine(failed)) + "</span>" : esc(d.failure_reason || "")) + "</td><td></td>";
      counts = d.done || null; done = counts ? counts.total : done + 1; show(); refreshSections();
    });
    es.addEventListener("run_finished", (e) => {
      const d = JSON.parse(e.data);
      es.close();
      $("#run-status").textContent = d.status;
      if (d.status !== "cancelled" && d.status !== "failed") { done = total; show(); }
      const cancel = $("#cancel-run"); if (cancel) cancel.remove();
      if (d.message) $("#progress-text").textContent += " · " + d.message;
      // The finished page has the bars, the gap and every row in its final form.
      setTimeout(() => location.reload(), 400);
    });
    const cancel = $("#cancel-run");
    if (cancel) cancel.addEventListener("click", async () => {
      cancel.disabled = true;
      const r = await post("/api/runs/" + encodeURIComponent(runId) + "/cancel");
      if (r.status !== 202) { cancel.disabled = false; alert(await message(r)); }
    });
  }

  document.querySelectorAll(".start-episode").forEach((b) => b.addEventListener("click", async () => {
    const r = await post("/reset", {task_id: b.dataset.task, seed: 0});
    if (!r.ok) { alert(await message(r)); return; }
    location.href = "/ui/env/sessions/" + encodeURIComponent(r.headers.get("X-Session-Id"));
  }));
  const open = $("#open-session");
  if (open) open.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const sid = new FormData(open).get("sid");
    if (sid) location.href = "/ui/env/sessions/" + encodeURIComponent(sid);
  });

  const state = $("#session-state");
  if (state) {
    const sid = state.dataset.session;
    // The episode as a timeline: one entry per step (its action, what the observation says, its reward, when),
    // from this page's own steps and from steps another client sent (seen in the polled state).
    let seen = 0, lastReward = 0;
    const summarize = (obs) => {
      if (!obs || typeof obs !== "object") return String(obs == null ? "" : obs);
      const services = Object.entries(obs.services || {}).map(([n, s]) => n + " " + (s && s.status || "?"));
      const alerts = (obs.alerts || []).length;
      return [obs.timestamp, services.join(", "), alerts ? alerts + " alert(s)" : ""].filter(Boolean).join(" · ");
    };
    const addStep = (n, action, obs, reward, note) => {
      const li = document.createElement("li"); li.className = "step episode-step"; li.dataset.step = n;
      li.innerHTML = "<span class='kind'>step " + esc(n) + "</span><span class='t'>" + esc(new Date().toLocaleTimeString()) +
        "</span><div><b>action</b> <code class='action'>" + esc(action) + "</code> · <b>reward</b> <span class='reward'>" +
        esc(reward == null ? "—" : Number(reward).toFixed(2)) + "</span></div><div class='obs'>" + esc(summarize(obs)) +
        (note ? " · " + esc(note) : "") + "</div>";
      $("#episode").appendChild(li);
    };
    const refresh = async () => {
      const r = await fetch("/state", {method: "GET", credentials: "same-origin", headers: {"X-Session-Id": sid}});
      const body = r.ok ? await r.json() : null;
      state.textContent = body ? JSON.stringify(body, null, 2) : "error: " + await message(r);
      if (body) {
        $("#episode-summary").textContent = "task " + body.task_id + " · step " + body.step_count + " / " + body.max_steps +
          " · episode reward " + Number(body.episode_reward).toFixed(2) + (body.done ? " · done" : "");
        if (body.step_count > seen) {
          addStep(body.step_count, "(sent by another client)", body.observation, body.episode_reward - lastReward, "");
          seen = body.step_count; lastReward = body.episode_reward;
        }
      }
      $("#state-age").textContent = "refreshed " + new Date().toLocaleTimeString();
      if (r.ok) setTimeout(refresh, 1000);
    };
    refresh();
    const step = $("#step-form");
    step.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      let action;
      try { action = JSON.parse(new FormData(step).get("action")); }
      catch (e) { $("#step-error").textContent = "not JSON: " + e.message; return; }
      const r = await post("/step", {action: action}, {"X-Session-Id": sid});
      $("#step-error").textContent = r.ok ? "" : await message(r);
      if (r.ok) {
        const d = await r.json();
        $("#observation").textContent = JSON.stringify(d, null, 2);
        const n = d.info && d.info.step != null ? d.info.step : seen + 1;
        if (n > seen) {
          addStep(n, JSON.stringify(action), d.observation, d.reward, d.info && d.info.message);
          seen = n; lastReward = d.info && d.info.episode_reward != null ? d.info.episode_reward : lastReward + d.reward;
        }
      }
    });
  }
})();
