// toolnexus console: the approvals list updates itself. Every few seconds
// the page is fetched again and the list of held calls replaced, unless
// the person is busy with it (focus inside the list, or a reason typed),
// so nothing moves under a keyboard or a screen reader. The count of
// waiting calls is a live region: a screen reader says when it changes.
// No inline script anywhere: the Content-Security-Policy allows only this
// file.
(function () {
  "use strict";
  var list = document.getElementById("held");
  if (!list || !window.fetch || !window.DOMParser) { return; }
  var every = (parseInt(list.getAttribute("data-refresh"), 10) || 5) * 1000;

  function busy() {
    if (list.contains(document.activeElement)) { return true; }
    var inputs = list.querySelectorAll("input[name=reason]");
    for (var i = 0; i < inputs.length; i++) {
      if (inputs[i].value !== "") { return true; }
    }
    return false;
  }

  function refresh() {
    if (document.hidden || busy()) { return; }
    fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (resp) {
        if (resp.redirected || !resp.ok) { throw new Error("not the page"); }
        return resp.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var next = doc.getElementById("held");
        var count = doc.getElementById("held-count");
        if (!next || busy()) { return; }
        list.replaceChildren.apply(list, Array.prototype.slice.call(document.importNode(next, true).childNodes));
        var here = document.getElementById("held-count");
        if (count && here && here.textContent !== count.textContent) { here.textContent = count.textContent; }
      })
      .catch(function () { /* the next round tries again */ });
  }

  window.setInterval(refresh, every);
}());
