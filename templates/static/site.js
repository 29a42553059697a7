// vaultbench docs site: search, the theme toggle, the phone menu, copy
// buttons, code group tabs. Every page reads without this script; nothing here loads anything
// from another site, and it works from a server or opened from disk.
(function () {
  "use strict";
  var doc = document.documentElement;
  // The way up from this page to the site root ("", "../", or the base path).
  var root = doc.getAttribute("data-root") || "";

  // Theme: the system's unless chosen; the choice is remembered.
  var THEME_KEY = "vaultbench-theme";
  var toggle = document.querySelector(".theme-toggle");
  var systemDark = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  function theme() {
    var chosen = doc.getAttribute("data-theme");
    if (chosen === "dark" || chosen === "light") return chosen;
    return systemDark && systemDark.matches ? "dark" : "light";
  }
  function showTheme() {
    if (toggle) toggle.setAttribute("aria-pressed", theme() === "dark" ? "true" : "false");
  }
  if (toggle) {
    toggle.addEventListener("click", function () {
      var next = theme() === "dark" ? "light" : "dark";
      doc.setAttribute("data-theme", next);
      try { localStorage.setItem(THEME_KEY, next); } catch (e) { /* storage off: this page only */ }
      showTheme();
    });
  }
  if (systemDark && systemDark.addEventListener) systemDark.addEventListener("change", showTheme);
  showTheme();

  // Phone menu.
  var menu = document.querySelector(".menu-toggle");
  if (menu) {
    menu.addEventListener("click", function () {
      var open = document.body.classList.toggle("nav-open");
      menu.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }

  // The outline is open beside the text on wide screens, folded above it
  // otherwise, and on the wide pages (tables and charts), which take the room.
  var outline = document.querySelector(".outline details");
  var widePage = document.body.classList.contains("wide");
  if (outline && !widePage && window.matchMedia && window.matchMedia("(min-width: 72em)").matches) outline.open = true;

  // Tables marked data-sortable: each header sorts by its column (again:
  // the other way). Numbers sort as numbers (`57.4%`, `19/29` as a
  // fraction, `—` last); anything else as text. data-filterable adds a text
  // filter and a provider menu above the table. The table is whole without this.
  function cellKey(td) {
    var text = (td ? td.textContent : "").trim();
    var frac = /^(\d+)\/(\d+)/.exec(text);
    if (frac) return Number(frac[2]) > 0 ? Number(frac[1]) / Number(frac[2]) : -1;
    var num = /^-?\d+(\.\d+)?/.exec(text);
    if (num) return Number(num[0]);
    return text === "\u2014" || text === "" ? null : text.toLowerCase();
  }
  Array.prototype.forEach.call(document.querySelectorAll("table[data-sortable]"), function (table) {
    var body = table.tBodies[0];
    if (!body) return;
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, column) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      button.addEventListener("click", function () {
        var descending = th.getAttribute("aria-sort") !== "descending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        var rows = Array.prototype.slice.call(body.rows);
        rows.forEach(function (row, i) { row._order = i; });
        rows.sort(function (a, b) {
          var x = cellKey(a.cells[column]), y = cellKey(b.cells[column]);
          if (x === null || y === null) return x === y ? a._order - b._order : (x === null ? 1 : -1);
          var c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
          return (descending ? -c : c) || a._order - b._order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
    if (!table.hasAttribute("data-filterable")) return;
    var tools = document.createElement("div");
    tools.className = "table-tools";
    var id = "filter-" + Math.random().toString(36).slice(2, 8);
    tools.innerHTML = '<label for="' + id + '">Filter</label><input type="search" id="' + id + '" class="filter-text" placeholder="model, provider, date\u2026" autocomplete="off">' +
      '<label for="' + id + '-p">Provider</label><select id="' + id + '-p" class="filter-provider"><option value="">all</option></select>' +
      '<span class="count" role="status" aria-live="polite"></span>';
    var select = tools.querySelector("select");
    var providers = {};
    Array.prototype.forEach.call(body.rows, function (row) {
      var p = row.querySelector("td.provider");
      if (p) providers[p.textContent.trim()] = true;
    });
    Object.keys(providers).sort().forEach(function (p) {
      var option = document.createElement("option");
      option.value = p;
      option.textContent = p;
      select.appendChild(option);
    });
    var scroller = table.closest(".table-scroll") || table;
    scroller.parentNode.insertBefore(tools, scroller);
    var text = tools.querySelector("input"), count = tools.querySelector(".count");
    function filter() {
      var words = text.value.toLowerCase().split(/\s+/).filter(Boolean), provider = select.value, shown = 0;
      Array.prototype.forEach.call(body.rows, function (row) {
        var hay = row.textContent.toLowerCase();
        var p = row.querySelector("td.provider");
        var ok = words.every(function (w) { return hay.indexOf(w) >= 0; }) && (!provider || (p && p.textContent.trim() === provider));
        row.hidden = !ok;
        if (ok) shown++;
      });
      count.textContent = shown + " of " + body.rows.length + " shown";
    }
    text.addEventListener("input", filter);
    select.addEventListener("change", filter);
  });

  // Compare: two menus lead to the page of that pair (in either order).
  var pick = document.getElementById("compare-pick");
  if (pick) {
    pick.addEventListener("submit", function (e) {
      e.preventDefault();
      var a = document.getElementById("compare-a").value, b = document.getElementById("compare-b").value;
      var status = pick.querySelector(".compare-status");
      if (a === b) { status.textContent = "Choose two different models."; return; }
      var links = document.querySelectorAll("ul.pairs a");
      for (var i = 0; i < links.length; i++) {
        var x = links[i].getAttribute("data-a"), y = links[i].getAttribute("data-b");
        if ((x === a && y === b) || (x === b && y === a)) { location.href = links[i].href; return; }
      }
      status.textContent = "This pair has no page; the list below has every comparison there is.";
    });
  }

  // Copy buttons on code blocks.
  function copyText(text, done) {
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallbackCopy(text, done); });
    } else {
      fallbackCopy(text, done);
    }
  }
  function fallbackCopy(text, done) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); done(); } catch (e) { /* nothing to report to */ }
    document.body.removeChild(area);
  }
  Array.prototype.forEach.call(document.querySelectorAll("div.code"), function (block) {
    var pre = block.querySelector("pre");
    if (!pre) return;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy the code");
    button.addEventListener("click", function () {
      copyText(pre.textContent, function () {
        button.textContent = "Copied";
        button.classList.add("copied");
        setTimeout(function () { button.textContent = "Copy"; button.classList.remove("copied"); }, 1500);
      });
    });
    block.appendChild(button);
  });

  // Code groups (`::: code-group`): the blocks become tabs labelled by their
  // titles (else their language), as ARIA tabs: a click, or the arrow keys,
  // Home and End on the tab list. Without this script the blocks stand one
  // under another, each under its title.
  Array.prototype.forEach.call(document.querySelectorAll(".container-code-group"), function (group, g) {
    var blocks = Array.prototype.filter.call(group.children, function (c) { return c.classList.contains("code"); });
    if (blocks.length < 2) return;
    var list = document.createElement("div");
    list.className = "code-tabs";
    list.setAttribute("role", "tablist");
    list.setAttribute("aria-label", "Variants of this code");
    var tabs = blocks.map(function (block, i) {
      var title = block.querySelector(".code-title");
      var tab = document.createElement("button");
      tab.type = "button";
      tab.id = "code-group-" + g + "-tab-" + i;
      tab.setAttribute("role", "tab");
      tab.textContent = title ? title.textContent : (block.getAttribute("data-lang") || "Code " + (i + 1));
      if (!block.id) block.id = "code-group-" + g + "-panel-" + i;
      tab.setAttribute("aria-controls", block.id);
      block.setAttribute("role", "tabpanel");
      block.setAttribute("aria-labelledby", tab.id);
      if (title) title.hidden = true;
      tab.addEventListener("click", function () { select(i, false); });
      list.appendChild(tab);
      return tab;
    });
    function select(chosen, focus) {
      tabs.forEach(function (tab, i) {
        var on = i === chosen;
        tab.setAttribute("aria-selected", on ? "true" : "false");
        tab.tabIndex = on ? 0 : -1;
        blocks[i].hidden = !on;
      });
      if (focus) tabs[chosen].focus();
    }
    list.addEventListener("keydown", function (e) {
      var at = tabs.indexOf(document.activeElement);
      if (at === -1) return;
      var to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      select((to + tabs.length) % tabs.length, true);
    });
    group.insertBefore(list, blocks[0]);
    group.classList.add("tabbed");
    select(0, false);
  });

  // Search: the index is a script (search-index.js, built with the site)
  // loaded on first use. What is typed while it loads is searched once it
  // is here (the latest query, nothing dropped). `?q=words` in the address
  // opens the search with its results, and the address follows the query,
  // so a search can be linked.
  var input = document.getElementById("search-input");
  var box = document.getElementById("search-results");
  if (!input || !box) return;
  var index = null;
  var loading = false;
  var pending = null;
  var MAX_HITS = 12;
  var PER_PAGE = 3;

  function load(then) {
    if (index) return then();
    pending = then;
    if (loading) return;
    loading = true;
    var script = document.createElement("script");
    script.src = root + "search-index.js";
    script.onload = function () {
      var data = window.vaultbenchSearchIndex;
      if (!data) { note("The search index could not be read."); return; }
      index = {
        pages: data.pages,
        sections: data.sections,
        pageTitles: data.pages.map(function (p) { return p[0].toLowerCase(); }),
        headings: data.sections.map(function (s) { return s[2].toLowerCase(); }),
        texts: data.sections.map(function (s) { return s[3].toLowerCase(); })
      };
      var run = pending;
      pending = null;
      if (run) run();
    };
    script.onerror = function () { note("The search index could not be loaded."); };
    document.head.appendChild(script);
  }

  function note(text) {
    box.textContent = "";
    var p = document.createElement("p");
    p.className = "search-note";
    p.textContent = text;
    box.appendChild(p);
    box.hidden = false;
  }

  function count(hay, term) {
    var n = 0;
    var at = hay.indexOf(term);
    while (at !== -1 && n < 10) { n += 1; at = hay.indexOf(term, at + term.length); }
    return n;
  }

  // Every term must appear in the section's heading, text or page title;
  // matches in headings and titles count most. At most PER_PAGE hits from
  // one page, so one long page does not fill the list.
  function search(query) {
    var terms = query.toLowerCase().split(/\s+/).filter(Boolean).slice(0, 8);
    if (!terms.length) return [];
    var hits = [];
    for (var i = 0; i < index.sections.length; i++) {
      var page = index.sections[i][0];
      var score = 0;
      for (var t = 0; t < terms.length; t++) {
        var term = terms[t];
        var inHeading = index.headings[i].indexOf(term) !== -1;
        var inTitle = index.pageTitles[page].indexOf(term) !== -1;
        var inText = count(index.texts[i], term);
        if (!inHeading && !inTitle && !inText) { score = 0; break; }
        score += (inHeading ? 10 : 0) + (inTitle ? 4 : 0) + Math.min(inText, 5);
      }
      if (score > 0) hits.push({ section: i, page: page, score: score });
    }
    hits.sort(function (a, b) { return b.score - a.score || a.section - b.section; });
    var perPage = {};
    var kept = [];
    for (var h = 0; h < hits.length && kept.length < MAX_HITS; h++) {
      var n = perPage[hits[h].page] || 0;
      if (n >= PER_PAGE) continue;
      perPage[hits[h].page] = n + 1;
      kept.push({ section: index.sections[hits[h].section], terms: terms });
    }
    return kept;
  }

  // Text with every term marked, built as DOM nodes (the text may come from
  // a baseline: it is never parsed as HTML).
  function marked(text, terms, into) {
    var lower = text.toLowerCase();
    var pos = 0;
    while (pos < text.length) {
      var next = -1, len = 0;
      for (var t = 0; t < terms.length; t++) {
        var at = lower.indexOf(terms[t], pos);
        if (at !== -1 && (next === -1 || at < next)) { next = at; len = terms[t].length; }
      }
      if (next === -1) { into.appendChild(document.createTextNode(text.slice(pos))); break; }
      if (next > pos) into.appendChild(document.createTextNode(text.slice(pos, next)));
      var mark = document.createElement("mark");
      mark.textContent = text.slice(next, next + len);
      into.appendChild(mark);
      pos = next + len;
    }
  }

  // About 160 characters around the first match, cut between words.
  function snippet(text, terms) {
    var lower = text.toLowerCase();
    var first = -1;
    terms.forEach(function (term) {
      var at = lower.indexOf(term);
      if (at !== -1 && (first === -1 || at < first)) first = at;
    });
    var start = first > 50 ? first - 50 : 0;
    if (start > 0) {
      var space = text.indexOf(" ", start);
      if (space !== -1 && space < first) start = space + 1;
    }
    var end = Math.min(text.length, start + 160);
    if (end < text.length) {
      var cut = text.lastIndexOf(" ", end);
      if (cut > start + 80) end = cut;
    }
    return (start > 0 ? "\u2026" : "") + text.slice(start, end) + (end < text.length ? "\u2026" : "");
  }

  // The address follows the query (`?q=`), without adding to the history.
  function remember(query) {
    if (!window.history || !history.replaceState || !window.URL) return;
    try {
      var url = new URL(location.href);
      if (query) url.searchParams.set("q", query); else url.searchParams.delete("q");
      if (url.href !== location.href) history.replaceState(history.state, "", url.href);
    } catch (e) { /* an address that cannot change (some file:// pages): the search still works */ }
  }

  function show() {
    var query = input.value.trim();
    remember(query);
    if (!query) { box.hidden = true; box.textContent = ""; return; }
    var hits = search(query);
    if (!hits.length) { note("No results for \u201c" + query + "\u201d."); return; }
    box.textContent = "";
    var list = document.createElement("ul");
    hits.forEach(function (hit) {
      var s = hit.section;
      var page = index.pages[s[0]];
      var a = document.createElement("a");
      a.href = root + page[1] + (s[1] ? "#" + encodeURIComponent(s[1]) : "");
      a.className = "search-hit";
      var title = document.createElement("span");
      title.className = "hit-title";
      marked(s[2] && s[2] !== page[0] ? page[0] + " \u203a " + s[2] : page[0], hit.terms, title);
      a.appendChild(title);
      if (s[3]) {
        var text = document.createElement("span");
        text.className = "hit-text";
        marked(snippet(s[3], hit.terms), hit.terms, text);
        a.appendChild(text);
      }
      a.addEventListener("click", close);
      var li = document.createElement("li");
      li.appendChild(a);
      list.appendChild(li);
    });
    box.appendChild(list);
    box.hidden = false;
  }

  function close() { box.hidden = true; }
  function hitLinks() { return Array.prototype.slice.call(box.querySelectorAll("a")); }

  input.addEventListener("focus", function () { load(function () { if (input.value.trim()) show(); }); });
  input.addEventListener("input", function () { load(show); });
  input.addEventListener("keydown", function (e) {
    if (e.key === "ArrowDown") {
      var first = hitLinks()[0];
      if (first) { e.preventDefault(); first.focus(); }
    } else if (e.key === "Enter") {
      var top = hitLinks()[0];
      if (top) { e.preventDefault(); top.click(); }
    } else if (e.key === "Escape") {
      close();
      input.blur();
    }
  });
  box.addEventListener("keydown", function (e) {
    var links = hitLinks();
    var at = links.indexOf(document.activeElement);
    if (e.key === "ArrowDown" && at < links.length - 1) { e.preventDefault(); links[at + 1].focus(); }
    if (e.key === "ArrowUp") { e.preventDefault(); (at > 0 ? links[at - 1] : input).focus(); }
    if (e.key === "Escape") { close(); input.focus(); }
  });
  document.addEventListener("click", function (e) {
    if (!box.hidden && !box.contains(e.target) && e.target !== input) close();
  });
  // "/" anywhere (but in a text field) goes to the search box.
  document.addEventListener("keydown", function (e) {
    if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
    var el = document.activeElement;
    var typing = el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
    if (typing) return;
    e.preventDefault();
    input.focus();
  });
  // A search in the address: the box holds it and shows its results.
  var asked = null;
  try { asked = new URLSearchParams(location.search).get("q"); } catch (e) { /* no URLSearchParams */ }
  if (asked && asked.trim()) {
    input.value = asked;
    load(show);
  }
})();
