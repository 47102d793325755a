/* Sortable, filterable tables: the home leaderboard and the table of each dataset page. A form with
   data-table="<table id>" drives its table; the filters it holds (search, type, licence, ...) are the ones that
   apply, and the view's state lives in the URL. Verified and unverified models sit in two table bodies: each is
   sorted on its own, so they never mix.
   Rows are sorted and filtered as data (a record per row), and only one page of them (data-limit rows) is in the
   document at a time: laying out a thousand rows of forty cells costs a browser about a second, a page of them a
   few tens of milliseconds. The home page's own HTML holds the top rows and the group means, so that the table
   shows before any script runs; board.js gives the records of the whole table from data/board.js, whose row
   elements are built when first shown. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var CHECKS = ["open", "zeroshot", "verified"];
  var TEXTS = ["q", "type", "maxparams", "license", "view", "trust", "lang"];
  var TIERS = ["self-reported", "rests on claimed ranks", "re-scored", "reproduced"];  /* evaluator/trust.py TIERS */
  var DEFAULTS = { view: "score", page: "1" };

  function list(items) { return Array.prototype.slice.call(items); }

  /* Column index of every sortable header, honouring rowspan and colspan; `cells` gets the lowest header cell of
     every column (what "Download this view" names it by). */
  function headerColumns(table, cells) {
    var taken = [], columns = {};
    list(table.tHead.rows).forEach(function (row, r) {
      var c = 0;
      taken[r] = taken[r] || [];
      list(row.cells).forEach(function (cell) {
        while (taken[r][c]) { c += 1; }
        for (var dr = 0; dr < cell.rowSpan; dr += 1) {
          taken[r + dr] = taken[r + dr] || [];
          for (var dc = 0; dc < cell.colSpan; dc += 1) { taken[r + dr][c + dc] = true; }
        }
        if (cell.dataset.key) {
          columns[cell.dataset.key] = { index: c, th: cell, text: cell.hasAttribute("data-text") };
        }
        if (cells && cell.colSpan === 1) { cells[c] = cell; }
        c += cell.colSpan;
      });
    });
    return columns;
  }

  function csvField(value) {
    var text = value === null || value === undefined ? "" : String(value);
    if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) { text = "'" + text; }  /* inert in a spreadsheet */
    return /[",\r\n]/.test(text) ? "\"" + text.replace(/"/g, "\"\"") + "\"" : text;
  }

  /* The records of a table whose rows are all in the page's HTML (a dataset page): sort values read from the cells
     (data-v where a cell has one, else the number it starts with; text columns lower-cased). */
  function pageRecords(table) {
    var records = [];
    list(table.tBodies).forEach(function (body) {
      list(body.rows).forEach(function (row) {
        if (row.classList.contains("group-label")) { return; }
        records.push({ props: row.dataset, ranked: !body.classList.contains("unranked"), node: row,
                       value: function (index, text) { return cellValue(row.cells[index], text); } });
      });
    });
    return records;
  }

  function cellValue(cell, text) {
    if (text) { return cell.textContent.trim().toLowerCase(); }
    if (cell.dataset.v !== undefined) { return cell.dataset.v === "" ? null : Number(cell.dataset.v); }
    var number = parseFloat(cell.textContent);
    return isNaN(number) ? null : number;
  }

  function setup(form) {
    var table = document.getElementById(form.dataset.table);
    var status = document.getElementById(form.dataset.status);
    if (!table) { return; }
    var board = window.irboardBoard ? window.irboardBoard(table) : null;
    var records = board ? board.rows : pageRecords(table);
    var ranked = table.tBodies[0], unranked = table.querySelector("tbody.unranked");
    var label = unranked && unranked.querySelector("tr.group-label");
    if (board) {  /* the whole table replaces the page's partial one */
      table.tHead.innerHTML = board.head;
      list(table.tBodies).forEach(function (body) { body.remove(); });
      ranked = table.appendChild(document.createElement("tbody"));
      ranked.className = "ranked";
      unranked = table.appendChild(document.createElement("tbody"));
      unranked.className = "unranked";
      unranked.innerHTML = "<tr class=\"group-label\"><th scope=\"rowgroup\" colspan=\"" + board.columns + "\">" +
        board.label + "</th></tr>";
      label = unranked.rows[0];
      var partial = document.getElementById("board-partial");
      if (partial) { partial.hidden = true; }
    }
    var headers = [];
    var columns = headerColumns(table, headers);
    /* The default order is a sort by this column, best first (home: the mean the page is ordered by). */
    if (form.dataset.sort && columns[form.dataset.sort]) { DEFAULTS.sort = form.dataset.sort; DEFAULTS.desc = "1"; }
    if (form.dataset.hide) { DEFAULTS.hide = form.dataset.hide; }  /* columns a page hides until asked (dataset: cond) */
    var choices = list(form.querySelectorAll("input[name=col]"));
    var chosen = {};  /* column chooser value -> the column keys it shows or hides */
    choices.forEach(function (box) {
      var key = box.value;
      chosen[key] = key.indexOf("g-") === 0 ? [key, "r-" + key.slice(2)] : [key];
    });
    var fields = TEXTS.filter(function (name) { return form.elements[name]; })
      .concat(CHECKS.filter(function (name) { return form.elements[name]; }), ["sort", "desc", "all", "page"])
      .concat(choices.length ? ["hide"] : []);

    /* Whether `value` is one the address may set for `name`: a choice of its select, "1" for a checkbox. */
    function allowed(name, value) {
      var element = form.elements[name];
      if (name === "sort") { return Boolean(columns[value]); }
      if (name === "hide") { return value.split(",").every(function (key) { return Boolean(chosen[key]); }); }
      if (name === "desc") { return value === "1" || value === "0"; }
      if (name === "page") { return /^[1-9][0-9]{0,6}$/.test(value); }
      if (name === "all" || CHECKS.indexOf(name) !== -1) { return value === "1"; }
      if (element && element.tagName === "SELECT") {
        return list(element.options).some(function (option) { return option.value === value; });
      }
      return true;
    }

    /* "hide=" (empty) in the address: every column shown, on a page that hides some until asked (the dataset page's
       condensed view), so that a reload or a shared link keeps them shown. */
    function shownAll(params) { return params.has("hide") && !params.get("hide"); }

    /* The view the address asks for; values it cannot show are dropped and listed in `ignored`, said once. */
    function readState() {
      var params = new URLSearchParams(window.location.search), state = {}, ignored = [];
      fields.forEach(function (name) {
        var value = params.get(name) || "";
        if (value && !allowed(name, value)) {
          ignored.push(name + "=" + value);
          value = "";
        }
        state[name] = value || (name === "hide" && shownAll(params) ? "" : DEFAULTS[name] || "");
      });
      if (state.view && state.view !== "rank") { state.view = "score"; }
      state.ignored = ignored;
      /* show a sorted column the address asks for once the table is laid out; the default order opens the table
         at its left edge, the model names beside the first scores */
      state.reveal = Boolean(params.get("sort")) && state.sort !== DEFAULTS.sort;
      return state;
    }

    /* The address keeps parameters of other controls on the page (charts.js's top=). */
    function writeState(state) {
      var params = new URLSearchParams(window.location.search);
      fields.forEach(function (name) {
        var value = state[name];
        if (name === "desc" && state.sort && state.sort !== DEFAULTS.sort) {  /* a chosen sort keeps its direction */
          params.set(name, value === "1" ? "1" : "0");
        } else if (value && value !== DEFAULTS[name]) { params.set(name, value); }
        else if (name === "hide" && !value && DEFAULTS.hide) { params.set(name, ""); }  /* see shownAll */
        else { params.delete(name); }
      });
      var query = params.toString();
      try {
        window.history.replaceState(null, "", window.location.pathname + (query ? "?" + query : ""));
      } catch (error) { /* some file:// contexts refuse; the view still works */ }
    }

    function stateFromForm(state) {
      var next = { sort: state.sort, desc: state.desc, all: state.all, page: state.page, reveal: state.reveal };
      fields.forEach(function (name) {
        if (TEXTS.indexOf(name) !== -1) { next[name] = form.elements[name].value.trim(); }
        if (CHECKS.indexOf(name) !== -1) { next[name] = form.elements[name].checked ? "1" : ""; }
      });
      if (choices.length) {
        next.hide = choices.filter(function (box) { return !box.checked; })
          .map(function (box) { return box.value; }).join(",");
      }
      return next;
    }

    function fillForm(state) {
      fields.forEach(function (name) {
        var element = form.elements[name];
        if (TEXTS.indexOf(name) !== -1) {
          element.value = state[name];
          if (element.tagName === "SELECT" && element.value !== state[name]) { element.value = ""; }
        }
        if (CHECKS.indexOf(name) !== -1) { element.checked = state[name] === "1"; }
      });
      var hidden = (state.hide || "").split(",");
      choices.forEach(function (box) { box.checked = hidden.indexOf(box.value) === -1; });
    }

    function visible(record, state, words) {
      var data = record.props;
      if (!words.every(function (word) { return data.id.indexOf(word) !== -1; })) { return false; }
      if (state.type && data.type !== state.type) { return false; }
      if (state.license && data.license !== state.license) { return false; }
      if (state.maxparams && (data.params === "" || Number(data.params) > Number(state.maxparams))) { return false; }
      if (state.open && data.open !== "1") { return false; }
      if (state.zeroshot && data.zs !== "1") { return false; }
      if (state.verified && data.ver !== "1") { return false; }
      if (state.trust && TIERS.indexOf(data.tier) < TIERS.indexOf(state.trust)) { return false; }
      return true;
    }


    /* On a narrow screen the sorted column can sit off to the right: scroll the table's box to it, past the sticky
       model column. */
    function revealSorted(state) {
      var wrap = table.closest(".table-wrap");
      if (!state.sort || !wrap || wrap.scrollWidth <= wrap.clientWidth) { return; }
      var th = columns[state.sort].th, box = wrap.getBoundingClientRect(), cell = th.getBoundingClientRect();
      var sticky = table.tHead.rows[0].cells[0].getBoundingClientRect().width;
      if (cell.left < box.left + sticky || cell.right > box.right) {
        wrap.scrollLeft += cell.left - box.left - sticky - 8;
      }
    }

    function sortName(key) {
      var th = columns[key].th;
      return (th.dataset.unit || th.textContent).replace(/\s+/g, " ").replace(/[↕▲▼]|×100/g, "").trim();
    }

    /* Record indices in the order shown: verified models first, each group sorted by the chosen column (missing
       values last in both directions), ties in the page's own order. Each column's values are read once. */
    var values = {};
    function sortedIndices(state) {
      var order = records.map(function (record, index) { return index; });
      var key = state.sort, sign = state.desc === "1" ? -1 : 1;  /* "0" or "": ascending */
      var cached = key + "|" + (state.lang || "");  /* a language changes the means of its groups */
      if (key && !values[cached]) {
        values[cached] = records.map(function (record) { return record.value(columns[key].index, columns[key].text); });
      }
      var column = key ? values[cached] : null;
      order.sort(function (a, b) {
        if (records[a].ranked !== records[b].ranked) { return records[a].ranked ? -1 : 1; }
        var x = column ? column[a] : null, y = column ? column[b] : null;
        if (x !== y && (x === null || y === null)) { return x === null ? 1 : -1; }
        if (x !== null && x < y) { return -sign; }
        if (x !== null && x > y) { return sign; }
        return a - b;
      });
      Object.keys(columns).forEach(function (name) {
        var th = columns[name].th;
        if (name === state.sort) {
          th.setAttribute("aria-sort", state.desc === "1" ? "descending" : "ascending");
        } else {
          th.removeAttribute("aria-sort");
        }
      });
      return order;
    }

    /* The elements of these records, built in one go for those that have none yet. */
    function build(indices) {
      var missing = indices.filter(function (index) { return !records[index].node; });
      if (!missing.length) { return; }
      var holder = document.createElement("tbody");
      holder.innerHTML = missing.map(function (index) { return records[index].html(); }).join("");
      list(holder.rows).forEach(function (row, k) { records[missing[k]].node = row; });
    }

    /* A body whose rows are `nodes` (after its label row, if any): `body` itself when they already are, else a new
       body in its place (one change to the document rather than one for each row removed). */
    function fill(body, nodes, label) {
      var current = list(body.rows).slice(label ? 1 : 0);
      if (current.length === nodes.length && nodes.every(function (node, i) { return current[i] === node; })) {
        return body;
      }
      var fresh = body.cloneNode(false);
      if (label) { fresh.appendChild(label); }
      nodes.forEach(function (node) { fresh.appendChild(node); });
      body.parentNode.replaceChild(fresh, body);
      return fresh;
    }

    /* Hidden columns: their header gets `hidden` and their cells a rule of the table's style sheet (rows built
       later follow it too); a dataset group's header spans its shown columns. */
    var rules = document.createElement("style");
    document.head.appendChild(rules);
    function showColumns(state) {
      if (!choices.length) { return; }
      var hidden = {}, css = [];
      (state.hide ? state.hide.split(",") : []).forEach(function (value) {
        chosen[value].forEach(function (key) { hidden[key] = true; });
      });
      Object.keys(columns).forEach(function (key) {
        var column = columns[key], hide = Boolean(hidden[key]);
        column.th.hidden = hide;
        if (hide) { css.push("#" + table.id + " > tbody > tr > :nth-child(" + (column.index + 1) + ")"); }
      });
      css = css.length ? css.join(",\n") + " { display: none; }" : "";
      if (rules.textContent !== css) { rules.textContent = css; }
      list(table.tHead.querySelectorAll("th.group")).forEach(function (th) {
        var shown = list(table.tHead.querySelectorAll("th[data-key][data-group='" + th.dataset.group + "']"))
          .filter(function (cell) { return !cell.hidden; }).length;
        th.hidden = shown === 0;
        if (shown) { th.colSpan = shown; }
      });
    }

    var state = readState();
    var LIMIT = Number(form.dataset.limit) || 50;
    var matching = [];  /* record indices of the view, in order: what the pages show and the view's download holds */

    /* A long table shows a page of LIMIT (data-limit) matching rows, with buttons to the pages before and after it,
       until asked for all (all=1). */
    var pager = document.createElement("div");
    pager.className = "pager";
    pager.setAttribute("role", "group");
    pager.setAttribute("aria-label", "Pages of the table");
    pager.hidden = true;
    function pagerButton(id, text, click) {
      var button = document.createElement("button");
      button.type = "button";
      button.id = id;
      button.textContent = text;
      button.addEventListener("click", click);
      pager.appendChild(button);
      return button;
    }
    function turn(step) {  /* the buttons stay focusable at either end (aria-disabled), so focus is not lost */
      var page = Number(state.page) + step;
      if (page < 1 || page > Math.ceil(matching.length / LIMIT)) { return; }
      state.page = String(page);
      apply();
      var wrap = table.closest(".table-wrap");
      if (wrap) { wrap.scrollTop = 0; }
    }
    var previous = pagerButton("page-previous", "Previous " + LIMIT, function () { turn(-1); });
    var next = pagerButton("page-next", "Next " + LIMIT, function () { turn(1); });
    var more = pagerButton("show-all", "", function () { state.all = "1"; apply(); });
    more.className = "link";
    if (status) { status.parentNode.insertBefore(pager, status.nextSibling); }
    var note = document.createElement("p");  /* the sort: which column orders the rows, and how sure the order is */
    note.className = "status";
    note.id = table.id + "-sort";
    note.hidden = true;
    if (status) { status.parentNode.insertBefore(note, pager); }

    function apply() {
      var words = (state.q || "").toLowerCase().split(/\s+/).filter(Boolean);  /* every word matches */
      if (board && board.prepare) { board.prepare(state, columns, records); }  /* home: language means (board.js) */
      matching = sortedIndices(state).filter(function (index) { return visible(records[index], state, words); });
      if (board && board.view) {  /* home: ★, bold, language means and the sentence for this view (board.js) */
        board.view(matching.map(function (index) { return records[index]; }), state, columns, records);
      }
      if (state.view) { table.dataset.view = state.view; }
      showColumns(state);
      var cut = matching.length > LIMIT && !state.all, pages = Math.max(1, Math.ceil(matching.length / LIMIT));
      var page = cut ? Math.min(Number(state.page) || 1, pages) : 1;
      state.page = String(page);
      var first = cut ? (page - 1) * LIMIT : 0, shown = cut ? matching.slice(first, first + LIMIT) : matching;
      build(shown);
      ranked = fill(ranked, shown.filter(function (index) { return records[index].ranked; })
        .map(function (index) { return records[index].node; }), null);
      var apart = shown.filter(function (index) { return !records[index].ranked; })
        .map(function (index) { return records[index].node; });
      if (unranked) { unranked = fill(unranked, apart, label); }
      if (label) { label.hidden = apart.length === 0; }  /* a group label without a listed row is hidden too */
      var sorted = state.sort ? "Sorted by " + sortName(state.sort) + (state.desc === "1" ? ", highest first" :
        ", lowest first") + (state.sort.indexOf("g-") === 0 ? (board && board.sortNote &&
        board.sortNote(state.sort, state, columns)) || "; the rank range beside each mean says how sure." : ".") : "";
      pager.hidden = !cut;
      previous.setAttribute("aria-disabled", String(page === 1));
      next.setAttribute("aria-disabled", String(page === pages));
      more.textContent = "List all " + matching.length.toLocaleString("en") + " matching models";
      if (status) {
        status.textContent = (cut ? "Showing " + (first + 1).toLocaleString("en") + "–" +
          (first + shown.length).toLocaleString("en") + " of " + matching.length.toLocaleString("en") +
          " matching models (" + records.length.toLocaleString("en") + " in all)." :
          "Showing " + matching.length + " of " + records.length + " models.") +
          (state.ignored && state.ignored.length ?
          " Ignored from the address (not a choice here): " + state.ignored.join(", ") + "." : "");
      }
      note.textContent = sorted;
      note.hidden = !sorted;
      writeState(state);
      if (state.reveal) { state.reveal = false; revealSorted(state); }
    }

    Object.keys(columns).forEach(function (key) {
      var th = columns[key].th;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      var link = th.querySelector("a");
      if (link) {
        button.setAttribute("aria-label", "Sort by " + link.textContent);
        th.appendChild(document.createTextNode(" "));
        th.appendChild(button);
      } else {
        while (th.firstChild) { button.appendChild(th.firstChild); }
        th.appendChild(button);
      }
      button.addEventListener("click", function () {
        if (state.sort === key) {
          state.desc = state.desc === "1" ? "0" : "1";
        } else {
          state.sort = key;
          state.desc = columns[key].text || th.hasAttribute("data-asc") ? "0" : "1";  /* scores: best first */
        }
        state.page = "1";
        state.reveal = true;
        apply();
      });
    });

    /* "Download this view": the rows that match, in their order (on every page, not only the one shown), with every
       column shown, for machines: one value per cell. A shown cell splits into its value and, where it shows them,
       its interval (ci_low, ci_high), a prediction's measured error (error), rank range (rank_low, rank_high), wins/ties/losses, the datasets covered of a
       partial group (covered, total) and verdict (the marks: best_set
       for ★ or bold, where the model could be #1 (analysis/best_words.py), better ▲, worse ▼, meaningful ●, trained on it †, unverified *, could flip over the unjudged documents ◊, space-separated) and
       Judged@k beside a value (judged); numbers as
       numbers (×100 as shown, p-values exact), "–" as an empty cell. Each header names the full dataset id, metric
       and unit; the column `verified` says whether every result of the model was re-scored. */
    function shownText(cell) {
      var copy = cell.cloneNode(true);
      list(copy.querySelectorAll(".sr, svg")).forEach(function (node) { node.remove(); });
      return copy.textContent.replace(/\s+/g, " ").replace(/ ?[↕▲▼]$/, "").trim();
    }

    var NUMBER = /^[+\-−]?\d+(\.\d+)?%?$/;
    var MARKS = [["★", "best_set"], ["▲", "better"], ["▼", "worse"], ["●", "meaningful"], ["†", "trained"], ["*", "unverified"],
                 ["◊", "could_flip"]];
    function number(text) { return Number(text.replace("−", "-").replace(/^\+/, "").replace(/%$/, "")); }

    function cellFields(cell, rankColumn) {
      var copy = cell.cloneNode(true), out = {}, verdict = [], found;
      list(copy.querySelectorAll(".sr, svg")).forEach(function (node) { node.remove(); });
      list(copy.querySelectorAll("sub.jd")).forEach(function (node) {  /* Judged@k beside a value (render.judged_sub) */
        out.judged = Number(node.textContent.charAt(0) === "." ? "0" + node.textContent : node.textContent);
        node.remove();
      });
      var text = copy.textContent.replace(/\s+/g, " ").trim();
      if (cell.tagName === "TD" && cell.classList.contains("top")) { verdict.push("best_set"); }
      MARKS.forEach(function (mark) {
        if (text.indexOf(mark[0]) !== -1) { verdict.push(mark[1]); text = text.split(mark[0]).join(" "); }
      });
      text = text.replace(/\b(not ranked.*)$/, "").replace(/\s+/g, " ").trim();
      if ((found = text.match(/±\s?(\d+(?:\.\d+)?)/))) {  /* a prediction's measured error */
        out.error = Number(found[1]);
        text = text.replace(found[0], "").trim();
      }
      if ((found = text.match(/\[([^,\]]+), ([^\]]+)\]/))) {
        out.ci_low = number(found[1]);
        out.ci_high = number(found[2]);
        text = text.replace(found[0], "").trim();
      }
      found = text.match(/rank (\d+)(?:–(\d+))?/) || (rankColumn && text.match(/^(\d+)(?:–(\d+))?( of \d+)?$/));
      if (found) {
        out.rank_low = Number(found[1]);
        out.rank_high = Number(found[2] || found[1]);
        text = text.replace(found[0], "").trim();
      }
      if ((found = text.match(/^(\d+)\/(\d+)$/))) {  /* partial coverage: datasets covered / in the group */
        out.covered = Number(found[1]);
        out.total = Number(found[2]);
        text = "";
      }
      if ((found = text.match(/^(\d+) ?\/ ?(\d+) ?\/ ?(\d+)$/))) {
        out.wins = Number(found[1]);
        out.ties = Number(found[2]);
        out.losses = Number(found[3]);
        text = "";
      }
      if (cell.dataset.v !== undefined && cell.dataset.v !== "" && NUMBER.test(String(Number(cell.dataset.v)))) {
        out.value = Number(cell.dataset.v);  /* the exact value behind a rounded one (p-values) */
      } else if (text && text !== "–") {
        out.value = NUMBER.test(text) ? number(text) : text;
      }
      if (verdict.length) { out.verdict = verdict.join(" "); }
      return out;
    }

    var PARTS = ["value", "ci_low", "ci_high", "error", "rank_low", "rank_high", "wins", "ties", "losses", "covered", "total",
                 "judged", "verdict"];
    /* The view as a table of values: {header, rows}, for the CSV and the Parquet file. */
    function viewTable() {
      var off = state.view === "rank" ? "s" : state.view === "score" ? "r" : "";
      var names = { model: "model_id", type: "type", params: "parameters" };
      var shown = [];
      headers.forEach(function (th, index) {
        if (th.hidden || (off && th.classList.contains(off)) || !shownText(th)) { return; }
        shown.push({ index: index, name: names[th.dataset.key] || th.dataset.unit || shownText(th),
                     rank: th.dataset.key === "rank" || /^rank range/i.test(shownText(th)) });
      });
      build(matching);  /* every matching row in the order shown (verified models first), on every page */
      var cells = matching.map(function (index) {
        var row = records[index].node;
        return shown.map(function (column) {
          var cell = row.cells[column.index], link = cell.tagName === "TH" && cell.querySelector("a");
          if (link) { return { value: link.textContent.trim() }; }  /* a model: its id, not its tags */
          if (column.index === 2 && table.id === "board") {  /* parameters: the count, not "110M" */
            return { value: cell.dataset.v === "" ? undefined : Number(cell.dataset.v) };
          }
          return cellFields(cell, column.rank);
        });
      });
      var header = [], picks = [];  /* each column's parts that some row fills */
      shown.forEach(function (column, k) {
        PARTS.forEach(function (part) {
          if (cells.some(function (row) { return row[k][part] !== undefined; }) || (part === "value" &&
              !cells.length)) {
            header.push(part === "value" ? column.name : column.name + " " + part);
            picks.push([k, part]);
          }
        });
      });
      return {
        header: header.concat(["verified"]),
        rows: cells.map(function (row, r) {
          return picks.map(function (pick) { return row[pick[0]][pick[1]]; })
            .concat([records[matching[r]].props.ver === "1"]);
        })
      };
    }

    function viewCsv() {
      var view = viewTable();
      return [view.header].concat(view.rows).map(function (row) { return row.map(csvField).join(","); })
        .join("\r\n") + "\r\n";
    }

    /* leaderboard-<view>[-by-<column>[-asc]][-filtered].csv, <dataset slug>-view[...].csv */
    function viewName() {
      var name = table.dataset.download || table.id;
      name += table.id === "board" ? "-" + (state.view === "rank" ? "mean-ranks" : "group-means") : "-view";
      if (state.sort) { name += "-by-" + state.sort + (state.desc === "1" ? "" : "-asc"); }
      var filtered = TEXTS.concat(CHECKS).some(function (field) {
        return field !== "view" && state[field] && state[field] !== DEFAULTS[field];
      });
      return name.replace(/[^A-Za-z0-9_.-]+/g, "-") + (filtered ? "-filtered" : "") + ".csv";
    }

    var downloads = table.closest(".table-wrap").nextElementSibling;
    if (downloads && downloads.classList.contains("downloads") && window.Blob && window.URL) {
      var viewButton = document.createElement("button");
      viewButton.type = "button";
      viewButton.id = "download-view";
      viewButton.className = "link";
      viewButton.textContent = "this view (CSV: filters and sort applied, one value a cell, ×100 as shown)";
      var save = function (content, type, name) {
        var link = document.createElement("a");
        link.href = URL.createObjectURL(new Blob([content], { type: type }));
        link.download = name;
        document.body.appendChild(link);
        link.click();
        link.remove();
        setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
      };
      viewButton.addEventListener("click", function () { save(viewCsv(), "text/csv", viewName()); });
      downloads.appendChild(document.createTextNode(" · "));
      downloads.appendChild(viewButton);
      if (window.irboardParquet) {  /* the same table, typed (site/js/parquet.js) */
        var parquetButton = viewButton.cloneNode(false);
        parquetButton.id = "download-view-parquet";
        parquetButton.textContent = "this view (Parquet)";
        parquetButton.addEventListener("click", function () {
          var view = viewTable();
          save(window.irboardParquet(view.header, view.rows), "application/vnd.apache.parquet",
               viewName().replace(/\.csv$/, ".parquet"));
        });
        downloads.appendChild(document.createTextNode(" · "));
        downloads.appendChild(parquetButton);
      }
    }

    form.hidden = false;
    fillForm(state);
    /* On a phone the filters fold behind one line, unless the address has set one of them (the columns do not count). */
    var fold = form.querySelector("details.filter-fold");
    if (fold && window.matchMedia && window.matchMedia("(max-width: 600px)").matches &&
        !list(fold.querySelectorAll("select, input:not([name='col'])")).some(function (control) {
          return control.tagName === "SELECT" ? control.selectedIndex > 0 :
            control.type === "checkbox" ? control.checked : Boolean(control.value);
        })) {
      fold.open = false;
    }
    /* The header row sticks while the table scrolls in its box; the second header row sits under the first. */
    function stickHeader() {
      var second = table.tHead.rows[1];
      if (!second) { return; }
      var top = table.tHead.rows[0].getBoundingClientRect().height;
      list(second.cells).forEach(function (th) { th.style.top = top + "px"; });
    }
    stickHeader();
    window.addEventListener("resize", stickHeader);

    function setColumns(show) {
      choices.forEach(function (box) { box.checked = show(box.value); });
      state = stateFromForm(state);
      apply();
      stickHeader();
    }
    var all = document.getElementById("cols-all"), means = document.getElementById("cols-means");
    if (all) { all.addEventListener("click", function () { setColumns(function () { return true; }); }); }
    if (means) {
      means.addEventListener("click", function () {
        setColumns(function (key) { return key.indexOf("g-") === 0; });
      });
    }

    function changed() { state = stateFromForm(state); state.page = "1"; apply(); stickHeader(); }
    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    form.addEventListener("reset", function (event) {
      event.preventDefault();
      state = { sort: "", desc: "" };
      fields.forEach(function (name) { state[name] = DEFAULTS[name] || ""; });
      fillForm(state);
      apply();
    });
    apply();
  }

  list(document.querySelectorAll("form.filters[data-table]")).forEach(setup);
})();
