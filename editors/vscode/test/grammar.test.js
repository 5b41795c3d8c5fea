// Tokenizes the repository's rules and suite files with the extension's TextMate grammars
// (vscode-textmate + vscode-oniguruma, the engine VS Code itself uses) and compares every
// line's tokens and scopes with test/golden/<file>.scopes.
//
//   node test/grammar.test.js            compare (exit 1 on any difference)
//   node test/grammar.test.js --update   rewrite the golden files
"use strict";
const fs = require("fs");
const path = require("path");
const vsctm = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

const here = path.resolve(__dirname, "..");
const repo = path.resolve(here, "..", "..");
const goldenDir = path.join(here, "test", "golden");
const update = process.argv.includes("--update");

// The files whose colouring is pinned: the bundled rules, the example suites, and a sampler
// of every construct (test/constructs.rules).
const inputs = [
  "rules/refunds.rules",
  "rules/guardrails.rules",
  "rules/tau-retail.rules",
  "examples/eval/support.suite",
  "tests/data/eval/vary-command/vary.suite",
  "editors/vscode/test/constructs.rules",
];

const grammars = {
  "source.trajcheck-rules": path.join(here, "syntaxes", "trajcheck-rules.tmLanguage.json"),
  "source.trajcheck-suite": path.join(here, "syntaxes", "trajcheck-suite.tmLanguage.json"),
};

async function main() {
  const wasm = fs.readFileSync(path.join(here, "node_modules", "vscode-oniguruma", "release", "onig.wasm")).buffer;
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) => {
      const file = grammars[scopeName];
      if (!file) return null;
      return vsctm.parseRawGrammar(fs.readFileSync(file, "utf8"), file);
    },
  });
  let failed = 0, passed = 0;
  for (const input of inputs) {
    const scope = input.endsWith(".suite") ? "source.trajcheck-suite" : "source.trajcheck-rules";
    const grammar = await registry.loadGrammar(scope);
    const lines = fs.readFileSync(path.join(repo, input), "utf8").split(/\r?\n/);
    if (lines.length && lines[lines.length - 1] === "") lines.pop();
    let state = vsctm.INITIAL;
    let out = "";
    lines.forEach((line, i) => {
      const r = grammar.tokenizeLine(line, state);
      state = r.ruleStack;
      out += `${i + 1}: ${line}\n`;
      for (const t of r.tokens) {
        const text = line.substring(t.startIndex, t.endIndex);
        const scopes = t.scopes.filter((s) => s !== scope);
        if (!scopes.length || !text.trim()) continue;  // plain text and blanks
        out += `    ${JSON.stringify(text)} ${scopes.join(" ")}\n`;
      }
    });
    const golden = path.join(goldenDir, path.basename(input) + ".scopes");
    if (update) {
      fs.writeFileSync(golden, out);
      console.log(`updated ${path.relative(here, golden)}`);
      continue;
    }
    const want = fs.existsSync(golden) ? fs.readFileSync(golden, "utf8") : "";
    if (want === out) {
      passed++;
      console.log(`ok   ${input}`);
    } else {
      failed++;
      const a = want.split("\n"), b = out.split("\n");
      let k = 0;
      while (k < a.length && k < b.length && a[k] === b[k]) k++;
      console.log(`FAIL ${input}: first difference at golden line ${k + 1}\n  want: ${a[k]}\n  got:  ${b[k]}`);
    }
  }
  if (!update) console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
