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
    };
    const row = (id) => Array.from(tbody.rows).find((tr) => tr.dataset.testId === id);
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
        (failed ? "<b>" + esc(failed.name) + "</b>: " + esc(failed.message) : esc(d.failure_reason || "")) + "</td><td></td>";
      counts = d.done || null; done = counts ? counts.total : done + 1; show();
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
    const refresh = async () => {
      const r = await fetch("/state", {method: "GET", credentials: "same-origin", headers: {"X-Session-Id": sid}});
      state.textContent = r.ok ? JSON.stringify(await r.json(), null, 2) : "error: " + await message(r);
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
      if (r.ok) $("#observation").textContent = JSON.stringify(await r.json(), null, 2);
    });
  }
})();
