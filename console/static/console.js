// The console's one script: progressive enhancement only. Every page and
// action works without it. Served same-origin under a CSP that allows no
// inline script.
(function () {
  "use strict";
  // A form with data-confirm asks before it is sent, in a modal dialog
  // of the page that the keyboard operates: the focus starts on the
  // button that confirms (Enter sends the form), Tab stays in the
  // dialog, and Escape or Cancel closes it and gives the focus back to
  // the button that opened it.
  var dialog, question, yes, opener, pending;
  function confirmDialog() {
    if (dialog) {
      return dialog;
    }
    dialog = document.createElement("dialog");
    dialog.className = "confirm";
    dialog.setAttribute("aria-labelledby", "confirm-question");
    question = document.createElement("p");
    question.id = "confirm-question";
    var actions = document.createElement("p");
    actions.className = "actions";
    yes = document.createElement("button");
    yes.type = "button";
    yes.id = "confirm-yes";
    yes.className = "danger";
    var no = document.createElement("button");
    no.type = "button";
    no.id = "confirm-no";
    no.className = "secondary";
    no.textContent = "Cancel";
    actions.append(yes, no);
    dialog.append(question, actions);
    document.body.append(dialog);
    yes.addEventListener("click", function () {
      var form = pending;
      pending = null;
      dialog.close();
      if (form) {
        // The submit event runs within requestSubmit: the flag lets this
        // one through and no other (a page restored by Back asks again).
        form.confirmed = true;
        form.requestSubmit(opener && opener.form === form ? opener : null);
        form.confirmed = false;
      }
    });
    no.addEventListener("click", function () {
      dialog.close();
    });
    // Escape closes the dialog (its cancel event); so does Cancel.
    dialog.addEventListener("close", function () {
      if (pending) {
        pending = null;
        if (opener && opener.isConnected) {
          opener.focus();
        }
      }
    });
    return dialog;
  }
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    var text = form.getAttribute && form.getAttribute("data-confirm");
    if (!text || form.confirmed) {
      return;
    }
    ev.preventDefault();
    var d = confirmDialog();
    opener = ev.submitter || form.querySelector("button[type=submit], button:not([type])");
    pending = form;
    question.textContent = text;
    // The confirming button says what it does: the first words of the
    // button that opened the dialog ("Disable user", "Revoke").
    var label = opener && opener.firstChild ? opener.firstChild.textContent.replace(/…$/, "").trim() : "";
    yes.textContent = label || "Confirm";
    d.showModal();
    yes.focus();
  });
  // A search form with data-live sends itself while the operator types,
  // a short pause after the last key. The page that comes back puts the
  // focus in the field again, after what was typed, so typing goes on.
  document.querySelectorAll("form[data-live]").forEach(function (form) {
    var input = form.querySelector("input[type=search]");
    if (!input) {
      return;
    }
    var key = "console-live-search";
    var mark = location.pathname + "#" + input.id;
    var live = false;
    try {
      live = sessionStorage.getItem(key) === mark;
      sessionStorage.removeItem(key);
    } catch (e) {}
    if (live) {
      input.focus();
      input.setSelectionRange(input.value.length, input.value.length);
    }
    var timer;
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        try {
          sessionStorage.setItem(key, mark);
        } catch (e) {}
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
