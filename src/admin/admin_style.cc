// The admin page's style sheet (admin_page.h): readable on a laptop
// screen, light and dark as the system asks, a visible keyboard focus.
#include "src/admin/admin_page.h"

namespace mesh::internal {

const char kAdminCss[] = R"css(:root {
  --bg: #fbfbfa; --fg: #1d2125; --muted: #5d6670; --line: #d8dce0;
  --panel: #ffffff; --accent: #1f6feb; --bad: #c62828; --warn: #b26a00;
  --good: #1b7f3b; --focus: #ffbf47;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #14171a; --fg: #e6e8ea; --muted: #9aa4ae; --line: #30363d;
          --panel: #1b1f24; --accent: #58a6ff; --bad: #ff7b72;
          --warn: #e3b341; --good: #56d364; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); }
header { display: flex; align-items: baseline; gap: 1.2em; padding: 0.6em 1.5em;
         border-bottom: 1px solid var(--line); background: var(--panel);
         position: sticky; top: 0; z-index: 1; }
header h1 { font-size: 1.3em; margin: 0; }
header nav { margin-left: auto; display: flex; gap: 1em; }
main { padding: 0.5em 1.5em 3em; max-width: 1400px; }
h2 { font-size: 1.1em; margin: 1.4em 0 0.5em; }
h3 { font-size: 1.02em; margin: 0 0 0.3em; }
h4 { font-size: 0.95em; margin: 0.9em 0 0.3em; color: var(--muted); }
a { color: var(--accent); }
a:focus, button:focus, input:focus, summary:focus {
  outline: 3px solid var(--focus); outline-offset: 2px; }
.muted { color: var(--muted); }
.bad { color: var(--bad); font-weight: 600; }
.warn { color: var(--warn); font-weight: 600; }
.good { color: var(--good); }
.card { background: var(--panel); border: 1px solid var(--line);
        border-radius: 6px; padding: 0.8em 1em; margin: 0 0 1em; }
.card-head { display: flex; flex-wrap: wrap; gap: 0.4em 1.2em;
             align-items: baseline; }
.badge { display: inline-block; padding: 0 0.5em; border-radius: 1em;
         border: 1px solid var(--line); font-size: 0.85em; }
table { border-collapse: collapse; width: 100%; margin: 0.2em 0 0.6em; }
th, td { text-align: left; padding: 0.25em 0.6em;
         border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 0.9em; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.path { font-family: ui-monospace, Menlo, Consolas, monospace;
          word-break: break-all; }
.bar { display: inline-block; height: 0.7em; background: var(--accent);
       vertical-align: middle; border-radius: 2px; min-width: 1px; }
canvas { width: 100%; max-width: 960px; height: auto; display: block;
         background: var(--panel); border: 1px solid var(--line);
         border-radius: 6px; }
canvas.small { max-width: 320px; }
.legend { list-style: none; padding: 0; margin: 0.4em 0; display: flex;
          flex-wrap: wrap; gap: 0.3em 1.2em; }
.legend span { display: inline-block; width: 0.8em; height: 0.8em;
               margin-right: 0.3em; border-radius: 2px; }
.plots { display: flex; flex-wrap: wrap; gap: 1em; }
.plots figure { margin: 0; }
.plots figcaption { font-size: 0.85em; color: var(--muted); }
form { display: flex; flex-wrap: wrap; gap: 0.6em 1em; align-items: center;
       margin-bottom: 0.5em; }
input { font: inherit; padding: 0.2em 0.4em; border: 1px solid var(--line);
        border-radius: 4px; background: var(--panel); color: var(--fg); }
button { font: inherit; padding: 0.25em 0.9em; border-radius: 4px;
         border: 1px solid var(--accent); background: var(--accent);
         color: #fff; cursor: pointer; }
button:disabled { opacity: 0.45; cursor: default; }
button[type=button] { background: transparent; color: var(--accent); }
pre { white-space: pre-wrap; word-break: break-word; margin: 0.2em 0; }
)css";

}  // namespace mesh::internal
