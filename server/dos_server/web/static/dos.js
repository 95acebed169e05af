// DOS by mail: every page's script. Local times, Copy and Share beside a link, and live
// updates of the table by long-polling /games/<id>/wait (the table's own script, table.js,
// swaps its part in place instead). Everything works without it (plain forms; reload).
(function () {
  "use strict";
  var lang = document.documentElement.lang || undefined;
  var browserZone = "";
  try { browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { browserZone = ""; }

  // A time shown in UTC because the reader chose no zone: in the browser's, in the page's
  // language, with the zone's name (where the browser knows that language's dates; else the
  // server's words stay, in UTC, until the zone sent below is stored).
  var known = false;
  try { known = !lang || Intl.DateTimeFormat.supportedLocalesOf([lang]).length > 0; } catch (e) { known = false; }
  if (known) document.querySelectorAll("time[data-local]").forEach(function (el) {
    var when = new Date(el.getAttribute("datetime"));
    if (isNaN(when)) { return; }
    try {
      el.textContent = when.toLocaleString(lang, {dateStyle: "full", timeStyle: "short"})
        + " (" + (browserZone || "UTC") + ")";
    } catch (e) { el.textContent = when.toLocaleString(); }
  });

  // The browser's zone fills the reader's the first time (the page says where, only when
  // none is stored); and a form that joins a seat carries it too.
  document.querySelectorAll("input[data-browser-zone]").forEach(function (field) {
    field.value = browserZone;
  });
  var fill = document.body.getAttribute("data-zone-fill");
  if (fill && browserZone && window.fetch) {
    var sent = new URLSearchParams();
    sent.set("csrf", document.body.getAttribute("data-csrf") || "");
    sent.set("time_zone", browserZone);
    fetch(fill, {method: "POST", body: sent, credentials: "same-origin", cache: "no-store"})
      .catch(function () {});
  }

  // Copy and Share beside a link (the host's invites): each button shows itself only where
  // the browser can do what it says; its words come from the page.
  function say(button, words) {
    var status = button.parentNode.querySelector(".sent");
    if (!status) { return; }
    status.textContent = "";  // a fresh text is read out again, even the same words
    window.setTimeout(function () { status.textContent = words; }, 50);
  }

  function copyByHand(text) {  // no async clipboard (http:// away from localhost)
    var field = document.createElement("textarea");
    field.value = text;
    field.setAttribute("readonly", "");
    field.style.position = "fixed";
    field.style.opacity = "0";
    document.body.appendChild(field);
    field.select();
    var done = false;
    try { done = document.execCommand("copy"); } catch (e) { done = false; }
    document.body.removeChild(field);
    return done;
  }

  var clipboard = navigator.clipboard && navigator.clipboard.writeText;
  var execCopy = document.queryCommandSupported && document.queryCommandSupported("copy");
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    if (!clipboard && !execCopy) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      var link = button.getAttribute("data-copy");
      var copied = function () { say(button, button.getAttribute("data-copied")); };
      var failed = function () { say(button, button.getAttribute("data-copy-failed")); };
      if (clipboard) {
        navigator.clipboard.writeText(link).then(copied, function () {
          if (copyByHand(link)) { copied(); } else { failed(); }
        });
      } else if (copyByHand(link)) { copied(); } else { failed(); }
    });
  });

  document.querySelectorAll("button[data-share]").forEach(function (button) {
    var shared = {title: button.getAttribute("data-share-title"),
                  text: button.getAttribute("data-share-text"),
                  url: button.getAttribute("data-share")};
    if (typeof navigator.share !== "function") { return; }
    if (typeof navigator.canShare === "function" && !navigator.canShare(shared)) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.share(shared).catch(function () {});  // closed without sharing: nothing to say
    });
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
      if (live) { live.textContent = body.getAttribute("data-changed") || ""; }
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
