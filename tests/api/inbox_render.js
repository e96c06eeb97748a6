// Renders api/templates/inbox.html's script against a minimal DOM with one pending request
// (given as JSON in argv[2]) and prints the labels of the card's buttons, one per line.
"use strict";
const fs = require("fs");
const html = fs.readFileSync(process.argv[2], "utf8");
const request = JSON.parse(process.argv[3]);
const script = html.split("<script>")[1].split("</script>")[0];

class Node {
  constructor(tag) { this.tag = tag; this.children = []; this.attrs = {}; this.text = ""; this.dataset = {}; }
  setAttribute(k, v) { this.attrs[k] = v; }
  addEventListener() {}
  append(...nodes) { this.children.push(...nodes); }
  replaceChildren(...nodes) { this.children = nodes; }
  set textContent(v) { this.text = v; this.children = []; }
  get textContent() { return this.text + this.children.map((c) => c.textContent || "").join(""); }
  querySelectorAll(tag) { return this.all().filter((n) => n.tag === tag); }
  querySelector(sel) { return this.all().find((n) => sel.startsWith("[") ? false : n.tag === sel) || null; }
  all() { return this.children.flatMap((c) => (c instanceof Node ? [c, ...c.all()] : [])); }
}
const byId = {};
global.document = {
  getElementById: (id) => (byId[id] = byId[id] || new Node("div")),
  createElement: (tag) => new Node(tag),
  createTextNode: (text) => ({ textContent: text }),
  querySelectorAll: () => [],
};
global.localStorage = { getItem: () => "token", setItem() {}, removeItem() {} };
global.setInterval = () => 0;
global.setTimeout = () => 0;
global.fetch = async () => ({ ok: true, status: 200, json: async () => [request] });
eval(script);
setImmediate(() => {
  for (const button of byId.requests.querySelectorAll("button")) console.log(button.textContent);
});
