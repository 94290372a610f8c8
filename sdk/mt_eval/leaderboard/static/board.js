// Sorting and filtering of the leaderboard tables. No dependencies; works from file:// and any static host.
(function () {
  "use strict";
  var selects = document.querySelectorAll("[data-filter]");
  var search = document.getElementById("search");

  function matches(row, section) {
    for (var i = 0; i < selects.length; i++) {
      var want = selects[i].value;
      if (!want) continue;
      var key = selects[i].getAttribute("data-filter");
      var have = key === "class" ? [row.dataset.mclass, row.dataset.dclass]
        : [row.dataset[key] || section.dataset[key]];
      if (have.indexOf(want) < 0) return false;
    }
    var text = search ? search.value.trim().toLowerCase() : "";
    return !text || row.textContent.toLowerCase().indexOf(text) >= 0;
  }

  function applyFilters() {
    document.querySelectorAll("section.group").forEach(function (section) {
      var visible = 0;
      section.querySelectorAll("tbody tr").forEach(function (row) {
        row.hidden = !matches(row, section);
        if (!row.hidden) visible++;
      });
      section.hidden = visible === 0;
    });
    var shown = document.querySelectorAll("section.group tbody tr:not([hidden])").length;
    var counter = document.getElementById("shown");
    if (counter) counter.textContent = String(shown);
  }

  function sortBy(header) {
    var table = header.closest("table");
    var key = header.getAttribute("data-sort");
    var numeric = header.hasAttribute("data-numeric");
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th[data-sort]").forEach(function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    function value(row) {  // the method's name is its link's text; the rest are data attributes
      return key === "name" ? row.querySelector("b").textContent.toLowerCase() : row.dataset[key] || "";
    }
    rows.sort(function (a, b) {
      var x = value(a), y = value(b);
      var order = numeric ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  // Each sortable header's text becomes a button: reached by Tab, pressed by Enter or Space, named as one.
  document.querySelectorAll("th[data-sort]").forEach(function (th) {
    var button = document.createElement("button");
    button.type = "button";
    while (th.firstChild) button.appendChild(th.firstChild);
    th.appendChild(button);
    th.addEventListener("click", function () { sortBy(th); });
  });
  var filters = document.querySelector(".filters");
  if (filters) filters.hidden = false;  // (without this script they do nothing, so they are hidden until now)
  selects.forEach(function (select) { select.addEventListener("change", applyFilters); });
  if (search) search.addEventListener("input", applyFilters);
  var params = new URLSearchParams(window.location.search);
  selects.forEach(function (select) {
    var value = params.get(select.getAttribute("data-filter"));
    if (value === null) return;
    select.value = value;
    if (select.value !== value) {  // a value no row has: chosen all the same, so that it shows no row
      var option = document.createElement("option");
      option.value = option.textContent = value;
      select.appendChild(option);
      select.value = value;
    }
  });
  applyFilters();
})();
