// The admin page's HTML (admin_page.h).
#include "src/admin/admin_page.h"

namespace mesh::internal {

const char kAdminHtml[] = R"html(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mesh admin</title>
<link rel="stylesheet" href="/admin.css">
<link rel="icon" href="data:,">
</head>
<body>
<header>
  <h1>mesh</h1>
  <span id="status" role="status" aria-live="polite">loading&hellip;</span>
  <nav aria-label="raw data">
    <a href="/describe">describe</a>
    <a href="/metrics">metrics</a>
    <a href="/healthz">healthz</a>
  </nav>
</header>
<main>
  <section aria-labelledby="rate-title">
    <h2 id="rate-title">Requests per second, last five minutes</h2>
    <canvas id="rate" width="960" height="150" role="img"
            aria-label="requests per second per destination over the last five minutes"></canvas>
    <ul id="rate-legend" class="legend"></ul>
  </section>
  <section aria-labelledby="destinations-title">
    <h2 id="destinations-title">Destinations</h2>
    <div id="destinations"><p class="muted">No destination called yet.</p></div>
  </section>
  <section aria-labelledby="tap-title">
    <h2 id="tap-title">Live tap</h2>
    <form id="tap-form" autocomplete="off">
      <label>Path prefix <input id="tap-path" placeholder="/books.Library/"></label>
      <label>Authority <input id="tap-authority" placeholder="books:7000"></label>
      <label>Method <input id="tap-method" size="8" placeholder="GET"></label>
      <button type="submit" id="tap-start">Start</button>
      <button type="button" id="tap-stop" disabled>Stop</button>
      <span id="tap-state" role="status" aria-live="polite"></span>
    </form>
    <table id="tap-table" aria-describedby="tap-title">
      <thead><tr>
        <th scope="col">time</th><th scope="col">method</th>
        <th scope="col">authority</th><th scope="col">path</th>
        <th scope="col">endpoint</th><th scope="col">route</th>
        <th scope="col">status</th><th scope="col" class="num">latency ms</th>
        <th scope="col" class="num">bytes</th>
      </tr></thead>
      <tbody id="tap-rows"></tbody>
    </table>
  </section>
</main>
<script src="/admin.js"></script>
</body>
</html>
)html";

}  // namespace mesh::internal
