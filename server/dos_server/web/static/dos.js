// DOS by mail: every page's script. Local times, and live updates of the table by
// long-polling /games/<id>/wait (the table's own script, table.js, swaps its part in place
// instead). Everything works without it (plain forms; reload).
(function () {
  "use strict";
  document.querySelectorAll("time[data-local]").forEach(function (el) {
    var when = new Date(el.getAttribute("datetime"));
    if (!isNaN(when)) { el.textContent = when.toLocaleString(); }
  });

  var body = document.body;
  var url = body.getAttribute("data-wait");
  if (!url || !window.fetch) { return; }
  // A page with a part of its own (the table) is kept live by its module script, which swaps
  // the part in place; a browser without modules runs this reload instead.
  if (body.hasAttribute("data-part") && "noModule" in document.createElement("script")) { return; }
  var version = body.getAttribute("data-version");
  var live = document.getElementById("live");

  function typing() {
    var box = document.getElementById("turn");
    return box && box === document.activeElement && box.value !== "";
  }

  function changed() {
    if (typing()) {  // do not throw away a half-typed turn: say so instead
      if (live) { live.textContent = "The table has changed: reload the page to see it."; }
      return;
    }
    window.location.reload();
  }

  function poll(delay) {
    window.setTimeout(function () {
      fetch(url + "?version=" + encodeURIComponent(version), {credentials: "same-origin", cache: "no-store"})
        .then(function (r) { if (!r.ok) { throw new Error(String(r.status)); } return r.json(); })
        .then(function (data) {
          if (data.changed) { changed(); } else { poll(0); }
        })
        .catch(function () { poll(10000); });
    }, delay);
  }
  poll(0);
})();
