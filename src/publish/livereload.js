// Live reload for `vaultbench publish --watch`; served only by the preview server.
(function () {
  var source = new EventSource("/__vaultbench/events");
  source.addEventListener("open", function () {
    document.documentElement.setAttribute("data-live-reload", "connected");
  });
  source.addEventListener("reload", function () {
    source.close();
    location.reload();
  });
})();
