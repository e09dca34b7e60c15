// Run by tests/test_real.py as `node -e "<this text>"`. Node.js brings V8's JIT, libuv's
// epoll loop and thread pool, and children spawned through execSync.
// All output is deterministic.
const { execSync, spawnSync } = require("child_process");
const crypto = require("crypto");
const fs = require("fs");
const os = require("os");
const path = require("path");

const data = { name: "strata", list: [1, 2.5, "three", null, true], nested: { a: { b: [] } } };
const text = JSON.stringify(data);
const back = JSON.parse(text);
console.log("json:", text, JSON.stringify(back) === text);

console.log("execSync:", JSON.stringify(execSync("echo hello from echo").toString()));
const r = spawnSync("/bin/sh", ["-c", "echo out; echo err >&2; exit 4"]);
console.log("spawnSync:", r.status, JSON.stringify(r.stdout.toString()), JSON.stringify(r.stderr.toString()));

// Crypto work goes to libuv's thread pool.
const hashes = [];
for (let i = 0; i < 4; i++) {
  hashes.push(new Promise((resolve, reject) =>
    crypto.pbkdf2("secret" + i, "salt", 20000, 16, "sha256", (err, key) =>
      err ? reject(err) : resolve(key.toString("hex")))));
}

// Files through the promise API (also the thread pool).
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "strata-node-"));
const fileWork = fs.promises.writeFile(path.join(dir, "f.txt"), "x".repeat(100000))
  .then(() => fs.promises.readFile(path.join(dir, "f.txt"), "utf8"))
  .then((s) => s.length);

// JIT: a hot loop.
let acc = 0;
for (let i = 0; i < 5e6; i++) acc = (acc + i * i) % 1000003;
console.log("loop:", acc);

const order = [];
// The timer is armed from the immediate, so the order is fixed however slow the run.
const timer = new Promise((resolve) => setImmediate(() => {
  order.push("immediate");
  setTimeout(() => { order.push("timeout"); resolve(); }, 50);
}));
Promise.resolve().then(() => order.push("microtask"));
order.push("sync");

Promise.all([timer, Promise.all(hashes), fileWork]).then(([, keys, len]) => {
  console.log("order:", order.join(","));
  console.log("pbkdf2:", keys.join(" "));
  console.log("file length:", len);
  fs.rmSync(dir, { recursive: true });
  return new Promise((_, reject) => setTimeout(() => reject(new Error("expected rejection")), 10));
}).catch((e) => {
  console.log("caught:", e.message);
  process.exitCode = 3;
});
