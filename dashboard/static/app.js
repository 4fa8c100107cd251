// kpool dashboard: live updates over server-sent events, and changes made
// through the JSON API, each shown as a plan (a dry run) before it is
// applied with the resource_version the page was rendered at.
"use strict";

const api = async (method, path, body) => {
  const headers = { "X-Kpool-Dashboard": "1", "Accept": "application/json" };
  if (body !== undefined) headers["Content-Type"] = method === "PATCH" ? "application/merge-patch+json" : "application/json";
  const res = await fetch(path, { method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await res.json(); } catch (e) { /* no body */ }
  return { status: res.status, ok: res.ok, data };
};

const el = (tag, attrs, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k);
  return e;
};

// errorBox shows an API error: its code, message and every field at fault.
const errorBox = (target, data, status) => {
  const err = (data && data.error) || { code: "HTTP " + status, message: "the server answered " + status };
  const box = el("div", { class: "error", role: "alert", "data-code": err.code }, el("strong", {}, err.code + ": " + err.message));
  if (err.details && !(err.fields && err.fields.length)) box.append(el("div", {}, err.details));
  if (err.fields && err.fields.length) {
    const ul = el("ul");
    for (const f of err.fields) ul.append(el("li", {}, el("code", {}, f.field), ": " + f.reason));
    box.append(ul);
  }
  target.replaceChildren(box);
};

const pairs = (text) => {
  const out = {};
  for (const line of (text || "").split("\n")) {
    const t = line.trim();
    if (!t) continue;
    const i = t.indexOf("=");
    if (i < 0) out[t] = ""; else out[t.slice(0, i).trim()] = t.slice(i + 1).trim();
  }
  return out;
};

const taints = (text) => {
  const out = [];
  for (const line of (text || "").split("\n")) {
    const t = line.trim();
    if (!t) continue;
    const c = t.lastIndexOf(":");
    const kv = c < 0 ? t : t.slice(0, c), effect = c < 0 ? "" : t.slice(c + 1);
    const i = kv.indexOf("=");
    const taint = { key: i < 0 ? kv : kv.slice(0, i), effect };
    if (i >= 0) taint.value = kv.slice(i + 1);
    out.push(taint);
  }
  return out;
};

const num = (v) => (v === "" || v === undefined ? undefined : Number(v));

// planTable shows a dry run's plan: every field, its class and why.
const planTable = (target, plan, warnings) => {
  const rows = (plan && plan.changes) || [];
  if (!rows.length) { target.replaceChildren(el("p", { id: "plan-empty" }, "Nothing would change.")); return false; }
  const tb = el("tbody");
  for (const c of rows) {
    // A replace the pool's updateStrategy carries out says how.
    const cls = c.class === "replace" && plan.replacement ? c.class + " (" + plan.replacement + ")" : c.class;
    tb.append(el("tr", {}, el("td", {}, el("code", {}, c.field)), el("td", { class: "class-" + c.class }, cls),
      el("td", {}, JSON.stringify(c.from === undefined ? null : c.from) + " → " + JSON.stringify(c.to === undefined ? null : c.to)), el("td", {}, c.reason || "")));
  }
  const t = el("table", { class: "plan", id: "plan-table" }, el("caption", {}, "Plan (" + (plan.provider || "") + ")"),
    el("thead", {}, el("tr", {}, el("th", {}, "Field"), el("th", {}, "Change"), el("th", {}, "From → to"), el("th", {}, "Why"))), tb);
  target.replaceChildren(t);
  for (const w of warnings || []) target.append(el("p", { class: "attention" }, "⚠ " + w));
  return true;
};

// Live: a page with data-live refreshes its live part when something it
// shows changes (at most every 400 ms), without reloading.
const live = () => {
  const root = document.querySelector("[data-live]");
  if (!root || !window.EventSource) return;
  const kind = root.dataset.live;
  let timer = null, pending = false;
  const refresh = async () => {
    timer = null;
    const url = new URL(location.href);
    url.searchParams.set("fragment", "main");
    const res = await fetch(url, { credentials: "same-origin", headers: { "X-Kpool-Dashboard": "1" } });
    if (!res.ok) return;
    const html = await res.text();
    const tpl = document.createElement("template");
    tpl.innerHTML = html.trim();
    const fresh = tpl.content.querySelector("[data-live]");
    const cur = document.querySelector("[data-live]");
    if (fresh && cur) cur.replaceWith(fresh);
    // A page in several live parts (the pool page, its change form between
    // them) swaps each of the others by its id.
    for (const part of tpl.content.querySelectorAll("[data-live-part]")) {
      const old = document.getElementById(part.id);
      if (old) old.replaceWith(part);
    }
    document.dispatchEvent(new CustomEvent("kpool:refreshed"));
  };
  const relevant = (c) => {
    if (c.type === "resync") return true;
    if (kind === "fleet") return true;
    if (kind === "cluster") return c.cluster_id === root.dataset.cluster;
    if (kind === "pool") return c.object_id === root.dataset.pool;
    return false;
  };
  const badge = document.getElementById("live");
  // The server ends a stream after its lifetime (30 minutes), and the
  // browser connects again by itself. A stream refused outright (429: too
  // many open; 401: signed out) is closed for good by the browser, so it
  // is tried again here, less and less often.
  const connect = (delay) => {
    const es = new EventSource("/live");
    // Once the stream is open, catch up: a change between the page's
    // render (or the last stream's end) and this start would be missed.
    es.onopen = () => { delay = 2000; if (badge) badge.hidden = false; if (!timer) timer = setTimeout(refresh, 0); };
    es.onerror = () => {
      if (badge) badge.hidden = true;
      if (es.readyState === EventSource.CLOSED) setTimeout(() => connect(Math.min(delay * 2, 60000)), delay);
    };
    es.onmessage = (m) => {
      let cs = [];
      try { cs = JSON.parse(m.data); } catch (e) { return; }
      if (!cs.some(relevant)) return;
      if (!timer) timer = setTimeout(refresh, 400);
    };
  };
  connect(2000);
};

// The pool page's edit form: review the plan, then apply it.
const editPool = () => {
  const box = document.getElementById("edit");
  if (!box) return;
  const id = box.dataset.pool;
  // Status reports move the resource_version; the form follows them as
  // long as the spec it was loaded with (its generation) is the pool's.
  document.addEventListener("kpool:refreshed", () => {
    const cur = document.querySelector('[data-live="pool"]');
    if (cur && cur.dataset.generation === box.dataset.generation) box.dataset.rv = cur.dataset.rv;
  });
  const form = document.getElementById("edit-form");
  const planBox = document.getElementById("plan"), result = document.getElementById("result");
  const apply = document.getElementById("apply");
  // body is a JSON merge patch (RFC 7386) of only what the user changed:
  // each field is compared with the value the page rendered (its default),
  // so a field the form shows with a default (autoscaling off) is not
  // written to a pool that never had it.
  const body = () => {
    const f = form.elements, spec = {};
    const changed = (e) => e && (e.type === "checkbox" ? e.checked !== e.defaultChecked : e.value !== e.defaultValue);
    if (changed(f.nodeCount)) spec.nodeCount = num(f.nodeCount.value);
    if (changed(f.labels)) {
      const was = pairs(f.labels.defaultValue), now = pairs(f.labels.value), labels = {};
      for (const k of Object.keys(was)) if (!(k in now)) labels[k] = null;
      for (const [k, v] of Object.entries(now)) if (was[k] !== v) labels[k] = v;
      if (Object.keys(labels).length) spec.labels = labels;
    }
    if (box.dataset.taints === "true" && changed(f.taints) && JSON.stringify(taints(f.taints.value)) !== JSON.stringify(taints(f.taints.defaultValue))) {
      spec.taints = taints(f.taints.value); // a list: a merge patch replaces it whole
    }
    if (box.dataset.autoscaling === "true" && [f.autoscaling, f.minNodes, f.maxNodes].some(changed)) {
      const auto = {};
      if (changed(f.autoscaling)) auto.enabled = f.autoscaling.checked;
      if (f.autoscaling.checked) {
        if (changed(f.minNodes)) auto.minNodes = num(f.minNodes.value) ?? null;
        if (changed(f.maxNodes)) auto.maxNodes = num(f.maxNodes.value) ?? null;
      } else if (changed(f.autoscaling)) {
        auto.minNodes = null; auto.maxNodes = null; // off: its bounds go too
      }
      if (Object.keys(auto).length) spec.autoscaling = auto;
    }
    const repl = document.getElementById("edit-replacement");
    if (repl && repl.value !== repl.dataset.was) spec.updateStrategy = { replacement: repl.value };
    return { spec, resource_version: box.dataset.rv };
  };
  // put sends the patch; a conflict that only a status report caused (the
  // spec's generation is still the form's) is retried once with the
  // current resource_version, so only a change to the spec is stale.
  const put = async (query) => {
    let r = await api("PATCH", "/api/v1/nodepools/" + id + query, body());
    if (r.status === 409) {
      const cur = await api("GET", "/api/v1/nodepools/" + id);
      if (cur.ok && String(cur.data.generation) === box.dataset.generation) {
        box.dataset.rv = cur.data.resource_version;
        r = await api("PATCH", "/api/v1/nodepools/" + id + query, body());
      }
    }
    return r;
  };
  document.getElementById("review").addEventListener("click", async () => {
    apply.hidden = true;
    const r = await put("?dry_run=true");
    if (!r.ok) {
      errorBox(planBox, r.data, r.status);
      if (r.status === 409) planBox.append(el("p", { id: "stale" }, "This pool changed since the page was loaded: reload to see it as it is now, then change it again."));
      return;
    }
    let shown = planTable(planBox, r.data.plan, r.data.plan && r.data.plan.warnings);
    const np = r.data.nodepool;
    if (!shown && np && String(np.generation) !== box.dataset.generation) {
      // A change of kpool's own settings (the replacement strategy) has
      // no row at the provider, but is a change all the same.
      planBox.replaceChildren(el("p", { id: "plan-kpool-only" }, "Nothing changes at the provider: only kpool's own settings (such as the replacement strategy) change."));
      shown = true;
    }
    apply.hidden = !shown;
    if (r.data.refused) {
      // The plan has rows the provider cannot make in place (replace) or
      // at all (not_implemented): shown with their reasons, not applied.
      apply.hidden = true;
      planBox.append(el("p", { class: "attention", id: "refused" }, "This change cannot be applied (" + r.data.refused.code + "): " +
        (r.data.refused.code === "NOT_IMPLEMENTED" ? "the provider cannot make the rows marked not_implemented." :
          "the rows marked replace need a new pool: set Replacement to Surge to have kpool replace it (a new pool is made, the nodes drained onto it, the old pool deleted), or create one with the new values, then delete this one.")));
    }
  });
  apply.addEventListener("click", async () => {
    const r = await put("");
    if (!r.ok) {
      errorBox(result, r.data, r.status);
      if (r.status === 409) result.append(el("p", { id: "stale" }, "This pool changed since the page was loaded: reload to see it as it is now, then change it again."));
      return;
    }
    result.replaceChildren(el("p", { id: "applied" }, "Applied: generation " + r.data.generation + ". The status follows below, live."));
    apply.hidden = true;
    box.dataset.rv = r.data.resource_version;
    box.dataset.generation = String(r.data.generation);
    // What is applied is the form's new starting point: the next change
    // is compared with it.
    for (const e of form.elements) {
      if (e.type === "checkbox") e.defaultChecked = e.checked;
      else if ("defaultValue" in e) e.defaultValue = e.value;
    }
    const repl = document.getElementById("edit-replacement");
    if (repl) repl.dataset.was = repl.value;
  });
  document.getElementById("delete").addEventListener("click", async () => {
    if (!confirm("Delete this pool at its provider?")) return;
    const r = await api("DELETE", "/api/v1/nodepools/" + id);
    if (!r.ok) { errorBox(result, r.data, r.status); return; }
    result.replaceChildren(el("p", { id: "deleting" }, "Deleting: the pool goes once its controller has removed it at the provider."));
  });
};

// The replacement panel's Rollback button: it lives in the live part of
// the page, redrawn on every change, so its click is caught on the
// document.
const rollback = () => {
  document.addEventListener("click", async (ev) => {
    const b = ev.target.closest && ev.target.closest("#rollback");
    if (!b) return;
    if (!confirm("Roll back this replacement? The new pool is drained and deleted; the old pool keeps serving.")) return;
    b.disabled = true;
    const live = document.querySelector('[data-live="pool"]');
    const r = await api("POST", "/api/v1/nodepools/" + live.dataset.pool + "/rollback");
    const out = document.getElementById("rollback-result");
    if (!r.ok) { b.disabled = false; errorBox(out, r.data, r.status); return; }
    out.replaceChildren(el("p", { id: "rolling-back" }, "Rollback requested: the status follows, live."));
  });
};

// The new-pool form: check (a dry run, with the API's own messages), then
// create.
const newPool = () => {
  const form = document.getElementById("create");
  if (!form) return;
  const result = document.getElementById("result"), create = document.getElementById("create-pool");
  const body = () => {
    const f = new FormData(form);
    const block = {};
    if (f.get("machine")) block[form.dataset.machine] = f.get("machine");
    for (const inp of form.querySelectorAll("[data-field]")) {
      if (inp.dataset.kind === "bool") { if (inp.checked) block[inp.dataset.field] = true; }
      else if (inp.value !== "") block[inp.dataset.field] = inp.dataset.kind === "number" ? Number(inp.value) : inp.value;
    }
    const spec = { platform: { [form.dataset.platform]: block }, nodeCount: num(f.get("nodeCount")) };
    if (f.get("zones")) spec.zones = f.get("zones").split(",").map((z) => z.trim()).filter(Boolean);
    if (f.get("autoscaling")) spec.autoscaling = { enabled: true, minNodes: num(f.get("minNodes")), maxNodes: num(f.get("maxNodes")) };
    if (f.get("mode")) spec.mode = f.get("mode");
    const labels = pairs(f.get("labels"));
    if (Object.keys(labels).length) spec.labels = labels;
    const ts = taints(f.get("taints"));
    if (ts.length) spec.taints = ts;
    return { name: f.get("name"), spec };
  };
  const path = "/api/v1/clusters/" + form.dataset.cluster + "/nodepools";
  document.getElementById("check").addEventListener("click", async () => {
    create.disabled = true;
    const r = await api("POST", path + "?dry_run=true", body());
    if (!r.ok) { errorBox(result, r.data, r.status); return; }
    const np = r.data.nodepool || {};
    result.replaceChildren(el("p", { id: "checked" }, "Valid: " + (np.provider_name ? "it will be " + np.provider_name + " at the provider." : "ready to create.")));
    for (const w of (r.data.plan && r.data.plan.warnings) || []) result.append(el("p", { class: "attention" }, "⚠ " + w));
    create.disabled = false;
  });
  create.addEventListener("click", async () => {
    const r = await api("POST", path, body());
    if (!r.ok) { errorBox(result, r.data, r.status); return; }
    location.href = "/nodepools/" + r.data.id;
  });
};

// Placement: the placements API on pasted manifests.
const placement = () => {
  const form = document.getElementById("placement");
  if (!form) return;
  document.getElementById("place").addEventListener("click", async () => {
    const f = new FormData(form);
    const body = { manifests: f.get("manifests") };
    const list = (v) => (v || "").split(",").map((s) => s.trim()).filter(Boolean);
    if (list(f.get("pools")).length) body.pools = list(f.get("pools"));
    if (list(f.get("zones")).length) body.zones = list(f.get("zones"));
    const result = document.getElementById("result"), out = document.getElementById("placed");
    const r = await api("POST", "/api/v1/clusters/" + form.dataset.cluster + "/placements", body);
    if (!r.ok) { errorBox(result, r.data, r.status); out.textContent = ""; return; }
    result.replaceChildren(el("p", {}, r.data.placed + " workloads placed."));
    for (const w of r.data.warnings || []) result.append(el("p", { class: "attention" }, "⚠ document " + w.document + ", " + w.object + ": " + w.message));
    out.textContent = r.data.manifests;
  });
};

document.addEventListener("DOMContentLoaded", () => { live(); editPool(); rollback(); newPool(); placement(); });

// The register form shows the chosen platform's fields only (without
// JavaScript, every platform's are shown, and only the chosen one's read).
const registerCluster = () => {
  const pick = document.getElementById("r-platform");
  if (!pick) return;
  const show = () => {
    for (const fs of document.querySelectorAll("fieldset.platform")) fs.hidden = fs.dataset.platform !== pick.value;
  };
  pick.addEventListener("change", show);
  show();
};
document.addEventListener("DOMContentLoaded", registerCluster);
