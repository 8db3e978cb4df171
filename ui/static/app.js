// continuity viewer: the little the pages need beyond HTML.
// Loaded as a file (the Content-Security-Policy allows no inline script).
"use strict";
(function () {
  // Resume preview: moving the budget slider shows its value at once and
  // asks the server for the pack at that budget (the same page, whose
  // #result section replaces this one), without reloading.
  const form = document.getElementById("resume-form");
  if (form) {
    const slider = document.getElementById("budget");
    const out = document.getElementById("budget-value");
    let timer = null;
    let seq = 0;
    const refresh = function () {
      if (!form.elements.session.value) {
        return;
      }
      const params = new URLSearchParams(new FormData(form));
      const url = "/resume?" + params.toString();
      const mine = ++seq;
      document.body.classList.add("busy");
      fetch(url, { credentials: "same-origin" })
        .then(function (r) { return r.text(); })
        .then(function (html) {
          if (mine !== seq) {
            return; // a later move asked again
          }
          const doc = new DOMParser().parseFromString(html, "text/html");
          const fresh = doc.getElementById("result");
          const cur = document.getElementById("result");
          if (fresh && cur) {
            cur.replaceWith(document.importNode(fresh, true));
          }
          history.replaceState(null, "", url);
        })
        .finally(function () {
          if (mine === seq) {
            document.body.classList.remove("busy");
          }
        });
    };
    slider.addEventListener("input", function () {
      out.value = slider.value;
      clearTimeout(timer);
      timer = setTimeout(refresh, 150);
    });
    slider.addEventListener("change", function () {
      clearTimeout(timer);
      refresh();
    });
  }

  // Health: the doctor's checks take a while on a large index; the page
  // shows first and fetches them (the link runs them without JS).
  document.querySelectorAll("section[data-load]").forEach(function (sec) {
    const pending = sec.querySelector("p");
    if (pending) {
      pending.textContent = "Running the doctor's checks…";
    }
    fetch(sec.dataset.load, { credentials: "same-origin" })
      .then(function (r) { return r.text(); })
      .then(function (html) {
        const doc = new DOMParser().parseFromString(html, "text/html");
        const fresh = doc.getElementById(sec.id);
        if (fresh) {
          sec.replaceWith(document.importNode(fresh, true));
        }
      });
  });
})();
