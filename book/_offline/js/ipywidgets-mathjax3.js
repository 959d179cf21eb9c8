/* ipywidgets' embedder (html-manager 1.x) typesets widget labels with the
 * MathJax 2 API, MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]); the book
 * loads MathJax 3, where that throws "reading 'Queue'". Map the call to
 * MathJax 3's typesetPromise. Listed before embed.js in nb_ipywidgets_js. */
(function () {
  "use strict";
  function install() {
    var mj = window.MathJax;
    if (!mj || mj.Hub) {
      return;
    }
    mj.Hub = {
      Queue: function (job) {
        var element = Array.isArray(job) ? job[2] : undefined;
        var ready = mj.startup && mj.startup.promise ? mj.startup.promise : Promise.resolve();
        return ready.then(function () {
          return window.MathJax.typesetPromise
            ? window.MathJax.typesetPromise(element ? [element] : undefined)
            : undefined;
        }).catch(function (err) { console.warn("MathJax typeset failed", err); });
      }
    };
  }
  install();  /* MathJax already loaded */
  document.addEventListener("DOMContentLoaded", install);  /* after deferred MathJax */
})();
