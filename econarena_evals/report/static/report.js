
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("data").textContent);
  var S = [];  // the strings of the column shown (each column's block has its own)
  // ---- each column's logs: a deflated, base64 block, unpacked when the column is first opened ----
  var blocks = {};  // block number -> Promise of {logs, strings}
  function block(b) {
    if (!blocks[b]) {
      var bin = atob(D.blocks[b]), bytes = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
      blocks[b] = new Response(stream).text().then(function (text) { return JSON.parse(text); });
    }
    return blocks[b];
  }
  var loaded = {};  // log number -> its data, once its block is unpacked
  var stringsOf = {};  // log number -> its block's strings
  function load(col) {  // Promise: every log of the column unpacked
    var wanted = [];
    D.index.forEach(function (L) { if (L.col === col && wanted.indexOf(L.block) < 0) wanted.push(L.block); });
    return Promise.all(wanted.map(function (b) {
      return block(b).then(function (data) {
        D.index.forEach(function (L, i) {
          if (L.block === b) { loaded[i] = data.logs[L.at]; stringsOf[i] = data.strings; }
        });
      });
    }));
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  // control characters and bidirectional overrides shown as visible marks, never interpreted
  function visible(s) {
    if (s === null || s === undefined) return "";
    return String(s).replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, function (c) {
      var n = c.charCodeAt(0);
      return String.fromCharCode(n === 127 ? 0x2421 : 0x2400 + n);
    }).replace(/[\u202A-\u202E\u2066-\u2069]/g, function (c) {
      return "<U+" + c.charCodeAt(0).toString(16).toUpperCase() + ">";
    });
  }
  function num(x) {
    if (x === null || x === undefined) return "-";
    if (typeof x !== "number") return String(x);
    return String(Number(x.toFixed(3)));
  }

  // ---- sortable tables ----
  function sortBy(table, col, th) {
    var body = table.tBodies[0];
    var asc = th.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows);
    function key(r) {
      var c = r.cells[col];
      var v = c ? c.getAttribute("data-v") : null;
      if (v === null || v === "") return null;
      var f = Number(v);
      return isNaN(f) ? v.toLowerCase() : f;
    }
    rows.sort(function (a, b) {
      var x = key(a), y = key(b);
      if (x === null && y === null) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      if (x < y) return asc ? -1 : 1;
      if (x > y) return asc ? 1 : -1;
      return 0;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (t) {
    Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th, i) {
      th.addEventListener("click", function () { sortBy(t, i, th); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") sortBy(t, i, th); });
    });
  });

  // melee logs alone: the page has their arena section, and no sessions or rule breaks to show
  if (!document.getElementById("sessions")) {
    document.body.setAttribute("data-ready", "1");
    return;
  }
  // ---- session browser ----
  var colSel = document.getElementById("sb-col"), playerSel = document.getElementById("sb-player"),
      sessSel = document.getElementById("sb-session"), info = document.getElementById("sb-info"),
      grid = document.getElementById("sb-grid"), detail = document.getElementById("sb-detail");
  var columns = [];
  D.index.forEach(function (L, i) {
    if (columns.indexOf(L.col) < 0) columns.push(L.col);
  });  // in the report's order: the eval sets' order of cells
  function rowsOf(col) {  // [{player, log}] of a column
    var out = [];
    D.index.forEach(function (L, i) {
      if (L.col === col) L.rows.forEach(function (p, j) {
        out.push({player: p, label: (L.labels && L.labels[j]) || p, log: i});
      });
    });
    out.sort(function (a, b) { return a.label < b.label ? -1 : a.label > b.label ? 1 : 0; });
    return out;
  }
  function fill(sel, items) {
    while (sel.firstChild) sel.removeChild(sel.firstChild);
    items.forEach(function (it) {
      var o = el("option", null, it.label);
      o.value = it.value;
      sel.appendChild(o);
    });
  }
  var state = {log: null, player: null, label: null, session: null, run: null, seat: null};
  function currentLog() { return loaded[state.log]; }
  function sessionOf(L, s) {
    for (var i = 0; i < L.sessions.length; i++) if (L.sessions[i].s === s) return L.sessions[i];
    return null;
  }
  function setHash() {
    var L = currentLog();
    if (!L) return;
    var h = "col=" + encodeURIComponent(L.col) + "&player=" + encodeURIComponent(state.player) +
      "&session=" + state.session;
    if (state.run !== null) h += "&run=" + (state.run + 1) + "&seat=" + state.seat;
    if (window.history && history.replaceState) history.replaceState(null, "", "#" + h);
  }
  var asked = 0;  // the latest column asked for: an earlier one that unpacks later is not shown
  function chooseColumn(col, player, session) {  // Promise: the column unpacked and shown
    var rows = rowsOf(col);
    fill(playerSel, rows.map(function (r, i) { return {label: r.label, value: String(i)}; }));
    var pick = 0;
    rows.forEach(function (r, i) { if (r.player === player || r.label === player) pick = i; });
    playerSel.value = String(pick);
    colSel.value = col;
    var me = ++asked;
    while (info.firstChild) info.removeChild(info.firstChild);
    info.appendChild(el("div", "note", "unpacking " + col + " ..."));
    return load(col).then(function () { if (me === asked) choosePlayer(rows[pick], session); });
  }
  function choosePlayer(row, session) {
    state.log = row.log;
    state.player = row.player;
    state.label = row.label || row.player;
    S = stringsOf[row.log];
    var L = currentLog();
    fill(sessSel, L.sessions.map(function (s) {
      var tag = s.errored ? "errored" : ("EAS " + num(s.eas[row.player]));
      return {label: "session " + s.s + " (" + tag + (s.t ? ", with replies" : "") + ")", value: String(s.s)};
    }));
    var target = null;
    L.sessions.forEach(function (s) { if (s.s === session) target = s.s; });
    if (target === null) {
      L.sessions.forEach(function (s) { if (target === null && s.t) target = s.s; });
    }
    if (target === null && L.sessions.length) target = L.sessions[0].s;
    sessSel.value = String(target);
    chooseSession(target);
  }
  function chooseSession(s) {
    state.session = s;
    state.run = null;
    state.seat = null;
    drawGrid();
    drawDetail();
    setHash();
  }
  function seatLabel(L, p) { return L.players[p]; }
  function drawGrid() {
    var L = currentLog(), S0 = sessionOf(L, state.session);
    while (grid.firstChild) grid.removeChild(grid.firstChild);
    while (info.firstChild) info.removeChild(info.firstChild);
    if (!S0) return;
    var params = Object.keys(S0.p).map(function (k) { return k + " " + num(S0.p[k]); }).join(", ");
    info.appendChild(el("div", null, L.col + " · " + L.file + (L.finished ? "" : " (partial)") + " · session " +
      S0.s + (params ? " · " + params : "") + " · evaluated: " + L.rows.join(", ")));
    if (L.command) info.appendChild(el("div", "note", "command: " + L.command));
    if (S0.errored) info.appendChild(el("div", "warn", "errored session: " + (S0.err || "no error text") +
      " (runs after the error are missing; their seats gave no answer)"));
    if (!S0.t) info.appendChild(el("div", "note", "Replies of this session are not embedded: write the report " +
      "with --transcripts all to see them. Its moves are below."));
    var seats = [], who = {};
    S0.runs.forEach(function (r) {
      r[3].forEach(function (c) {
        if (seats.indexOf(c[0]) < 0) seats.push(c[0]);
        who[c[0]] = who[c[0]] || {};
        who[c[0]][seatLabel(L, c[1])] = 1;
      });
    });
    seats.sort(function (a, b) { return a - b; });
    var t = el("table", "grid"), head = el("tr");
    head.appendChild(el("th", null, "run"));
    head.appendChild(el("th", null, L.outcome));
    head.appendChild(el("th", null, "winning seat(s)"));
    seats.forEach(function (s) {
      var th = el("th", null, "seat " + s);
      th.appendChild(el("span", "who", Object.keys(who[s]).join(" / ")));
      head.appendChild(th);
    });
    var thead = el("thead");
    thead.appendChild(head);
    t.appendChild(thead);
    var tb = el("tbody");
    S0.runs.forEach(function (r) {
      var tr = el("tr");
      tr.appendChild(el("td", "run", String(r[0] + 1)));
      tr.appendChild(el("td", "out", num(r[1])));
      tr.appendChild(el("td", "out", r[2].length ? (r[2].length > 1 ? "seats " : "seat ") + r[2].join(", ") : "none"));
      var bySeat = {};
      r[3].forEach(function (c) { bySeat[c[0]] = c; });
      seats.forEach(function (s) {
        var td = el("td"), c = bySeat[s];
        if (c) {
          var won = r[2].indexOf(s) >= 0;
          var b = el("button", "cell" + (c[3] ? "" : " bad") + (won ? " won" : "") +
            (seatLabel(L, c[1]) === state.player ? " me" : ""));
          b.type = "button";
          b.setAttribute("data-run", String(r[0] + 1));
          b.setAttribute("data-seat", String(s));
          b.setAttribute("data-player", seatLabel(L, c[1]));
          b.appendChild(el("span", "a", num(c[2])));
          b.appendChild(document.createTextNode(" "));
          b.appendChild(c[3] ? el("span", "ok", won ? "valid, won" : "valid") : el("span", "k", c[7] || "rule break"));
          b.appendChild(el("br"));
          b.appendChild(el("span", "d", "payoff " + num(c[4]) + " · NE " + num(c[5]) +
            (c[6] !== null ? " · v " + num(c[6]) : "")));
          if (L.players.length > 1 && Object.keys(who[s]).length > 1) {
            b.appendChild(el("br"));
            b.appendChild(el("span", "d", seatLabel(L, c[1])));
          }
          b.addEventListener("click", function () { chooseCell(r[0], s); });
          td.appendChild(b);
        }
        tr.appendChild(td);
      });
      tb.appendChild(tr);
    });
    t.appendChild(tb);
    var legend = el("div", "legend");
    legend.appendChild(el("span", null, "cell: " + L.action + ", valid or the kind of rule break; payoff; NE = the " +
      "equilibrium action" + (L.value_note ? "; " + L.value_note : "")));
    var me = el("span", null, state.label + "'s seats");
    me.style.borderLeft = "4px solid #1f6feb";
    legend.appendChild(me);
    var won = el("span", null, "won the run");
    won.style.background = "#eaf7ee";
    legend.appendChild(won);
    var bad = el("span", null, "rule break");
    bad.style.background = "#fdecea";
    legend.appendChild(bad);
    grid.appendChild(legend);
    grid.appendChild(t);
    var done = S0.runs.length;
    if (S0.errored) grid.appendChild(el("p", "note", done + " run(s) finished before the error."));
  }
  function chooseCell(run, seat) {
    state.run = run;
    state.seat = seat;
    Array.prototype.forEach.call(grid.querySelectorAll("button.cell"), function (b) {
      var on = Number(b.getAttribute("data-run")) === run + 1 && Number(b.getAttribute("data-seat")) === seat;
      b.className = b.className.replace(/ sel/g, "") + (on ? " sel" : "");
    });
    drawDetail();
    setHash();
  }
  function promptText(msgs) {
    return msgs.map(function (m) {
      return (m[0] ? m[0] + ":\n" : "") + m[1].map(function (i) { return S[i]; }).join("\n");
    }).join("\n\n");
  }
  function drawDetail() {
    while (detail.firstChild) detail.removeChild(detail.firstChild);
    var L = currentLog(), S0 = sessionOf(L, state.session);
    if (!S0 || state.run === null) {
      detail.appendChild(el("p", "note", "Click a cell for that seat's prompt and reply."));
      return;
    }
    var cell = null;
    S0.runs.forEach(function (r) {
      if (r[0] === state.run) r[3].forEach(function (c) { if (c[0] === state.seat) cell = c; });
    });
    var box = el("div", "detail");
    box.id = "sb-cell";
    var player = cell ? seatLabel(L, cell[1]) : "?";
    box.appendChild(el("h3", null, "Session " + S0.s + " · run " + (state.run + 1) + " · seat " + state.seat +
      " · " + player));
    var dl = el("dl");
    function row(k, v, cls) { dl.appendChild(el("dt", null, k)); dl.appendChild(el("dd", cls || null, v)); }
    var call = L.calls[S0.s + ":" + state.run + ":" + state.seat];
    if (cell) {
      row(L.action, num(cell[2]));
      row("valid", cell[3] ? "yes" : "no: rule break", cell[3] ? null : "kind");
      if (!cell[3]) row("rule break", cell[7] || "rule break", "kind");
      row("payoff", num(cell[4]));
      row("NE action", num(cell[5]));
      if (cell[6] !== null) row("private value", num(cell[6]));
    }
    if (call && call[2]) row("finish_reason", call[2]);
    box.appendChild(dl);
    if (!S0.t) {
      box.appendChild(el("p", "note", "This session's replies are not embedded (econarena-report --transcripts)."));
    } else if (!call) {
      box.appendChild(el("p", "note", "No reply on record for this seat: the call failed, or its completion " +
        "function records no sampling event."));
    } else {
      var f = call[3], fields = el("div", "fields");
      ["understanding", "choice", "reason"].forEach(function (k) {
        fields.appendChild(el("div", "name", k));
        var v = el("div", "val", f[k] !== undefined ? visible(S[f[k]]) : "(none: no JSON object with a choice)");
        v.setAttribute("data-field", k);
        fields.appendChild(v);
      });
      box.appendChild(fields);
      box.appendChild(el("h4", null, "Reply"));
      var rep = el("pre", "reply", call[1] === null ? "(no reply)" : visible(call[1]));
      rep.id = "sb-reply";
      box.appendChild(rep);
      if (call[4]) box.appendChild(el("p", "note", call[4] + " more characters in the log."));
      box.appendChild(el("h4", null, "Prompt"));
      var pr = el("pre", "prompt", visible(promptText(call[0])));
      pr.id = "sb-prompt";
      box.appendChild(pr);
    }
    detail.appendChild(box);
  }
  fill(colSel, columns.map(function (c) { return {label: c, value: c}; }));
  colSel.addEventListener("change", function () { chooseColumn(colSel.value, state.player, null); });
  playerSel.addEventListener("change", function () {
    var row = rowsOf(colSel.value)[Number(playerSel.value)];
    load(colSel.value).then(function () { choosePlayer(row, state.session); });
  });
  sessSel.addEventListener("change", function () { chooseSession(Number(sessSel.value)); });

  // ---- rule-break examples ----
  var ex = document.getElementById("rb-examples");
  while (ex.firstChild) ex.removeChild(ex.firstChild);
  var anyExample = false;
  Object.keys(D.rb.examples).sort().forEach(function (p) {
    var byKind = D.rb.examples[p];
    D.kinds.forEach(function (k) {
      var items = byKind[k];
      if (!items || !items.length) return;
      anyExample = true;
      var box = el("div", "example");
      var h = el("div");
      h.appendChild(el("strong", null, p));
      h.appendChild(document.createTextNode(" · "));
      h.appendChild(el("span", "kind", k));
      box.appendChild(h);
      items.forEach(function (it) {
        var L = D.index[it.log];
        var where = it.col + ", session " + it.session + ", run " + (it.run + 1) + ", seat " + it.seat +
          " (valid range " + num(it.range[0]) + " to " + num(it.range[1]) + ")" +
          (it.finish_reason ? ", finish_reason " + it.finish_reason : "");
        var line = el("div", "note", where + " ");
        if (it.t) {
          var go = el("button", null, "show in the session browser");
          go.type = "button";
          go.addEventListener("click", function () {
            chooseColumn(L.col, it.player || p, it.session).then(function () {
              chooseCell(it.run, it.seat);
              document.getElementById("browser").scrollIntoView();
            });
          });
          line.appendChild(go);
        }
        box.appendChild(line);
        box.appendChild(el("pre", "reply", it.reply ? visible(it.reply) : "(no reply on record)"));
        if (it.cut) box.appendChild(el("p", "note", it.cut + " more characters in the log."));
      });
      ex.appendChild(box);
    });
  });
  if (!anyExample) ex.appendChild(el("p", "note", "No rule breaks."));

  // ---- start: from the address (#col=...&player=...&session=...&run=...&seat=...) or the first log ----
  var want = {};
  (location.hash || "").replace(/^#/, "").split("&").forEach(function (kv) {
    var i = kv.indexOf("=");
    if (i > 0) {
      try { want[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1)); } catch (e) { /* ignore */ }
    }
  });
  if (want.view === "sessions") {  // the session browser alone: a page to link to, or to picture
    Array.prototype.forEach.call(document.querySelectorAll("section.part"), function (s) {
      if (s.id !== "sessions") s.style.display = "none";
    });
  }
  function ready() { document.body.setAttribute("data-ready", "1"); }
  function failed(e) {
    while (info.firstChild) info.removeChild(info.firstChild);
    info.appendChild(el("div", "warn", "This browser could not unpack the sessions (" + e + "): the session " +
      "browser needs DecompressionStream (Chromium 80, Firefox 113, Safari 16.4 or later)."));
    ready();
  }
  if (columns.length) {
    var col = columns.indexOf(want.col) >= 0 ? want.col : columns[0];
    chooseColumn(col, want.player || null, want.session !== undefined ? Number(want.session) : null).then(function () {
      if (want.run !== undefined && want.seat !== undefined) {
        chooseCell(Number(want.run) - 1, Number(want.seat));
        if (want.view !== "sessions") document.getElementById("browser").scrollIntoView();
      }
      ready();
    }, failed);
  } else {
    grid.appendChild(el("p", "note", "No sessions."));
    ready();
  }
})();
