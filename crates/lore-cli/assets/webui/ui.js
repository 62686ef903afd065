// lore ui: live updates and confirmations. Polls the tips of lore's refs; when they move
// (another process wrote), fetches the page again and swaps its content in place, unless the
// person is typing in a form.
(function () {
  "use strict";
  var body = document.body;
  var stamp = body.dataset.stamp || "";
  var busy = false;

  // Set when the person changes a field of a form on the page: their input is never replaced.
  var edited = false;
  document.addEventListener("input", function (e) {
    if (e.target && e.target.closest && e.target.closest("main form")) { edited = true; }
  });

  function typing() {
    return edited;
  }

  function refresh(next) {
    return fetch(location.href, { cache: "no-store", credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (text) {
        if (text === null) { return; }
        var doc = new DOMParser().parseFromString(text, "text/html");
        var fresh = doc.getElementById("main");
        var current = document.getElementById("main");
        if (!fresh || !current) { return; }
        current.replaceWith(fresh);
        stamp = doc.body.dataset.stamp || next;
        body.dataset.stamp = stamp;
        var live = document.getElementById("live");
        if (live) { live.textContent = "updated " + new Date().toLocaleTimeString(); }
      });
  }

  function poll() {
    if (busy || document.hidden || typing()) { return; }
    busy = true;
    fetch("/api/tips", { cache: "no-store", credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : ""; })
      .then(function (next) {
        next = next.trim();
        if (next && next !== stamp) { return refresh(next); }
      })
      .catch(function () { /* the server may be restarting: try again on the next tick */ })
      .then(function () { busy = false; });
  }

  setInterval(poll, 1000);

  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (form.dataset && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
      e.preventDefault();
    }
  });
})();
