// The console's one script: progressive enhancement only. Every page and
// action works without it. Served same-origin under a CSP that allows no
// inline script.
(function () {
  "use strict";
  // A form with data-confirm asks before it is sent.
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    var question = form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) {
      ev.preventDefault();
    }
  });
  // A search form with data-live sends itself while the operator types,
  // a short pause after the last key.
  document.querySelectorAll("form[data-live]").forEach(function (form) {
    var input = form.querySelector("input[type=search]");
    if (!input) {
      return;
    }
    var timer;
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        form.requestSubmit();
      }, 300);
    });
  });
})();
// Integrations: a button with data-copy copies the value of the input
// it names (a secret shown once); without JavaScript it stays hidden and
// the read-only input is selected and copied by hand.
(function () {
  "use strict";
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var input = document.getElementById(button.getAttribute("data-copy"));
    if (!input) {
      return;
    }
    button.hidden = false;
    button.addEventListener("click", function () {
      var done = function () {
        button.textContent = "Copied";
      };
      input.select();
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(input.value).then(done, function () {
          if (document.execCommand("copy")) {
            done();
          }
        });
      } else if (document.execCommand("copy")) {
        done();
      }
    });
  });
})();
