# Tests of `trajcheck eval`, `compare` and `case new`: golden reports of the example suite and
# of tests/data/eval (every gate kind, control flow, abstention, stale and unmatched cases),
# diagnostics of a bad suite, and the html reports opened in a real (headless) browser.
set(EVAL_EXAMPLE ${PROJECT_SOURCE_DIR}/examples/eval)
set(EVAL_DATA ${CMAKE_CURRENT_SOURCE_DIR}/data/eval)

function(trajcheck_eval_golden name workdir expected)
  string(REPLACE ";" "|" args "${ARGN}")
  add_test(NAME eval.golden.${name}
           COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:trajcheck_cli> -DWORKDIR=${workdir}
                   -DEXPECTED=${CMAKE_CURRENT_SOURCE_DIR}/golden/eval/${expected} "-DARGS=${args}"
                   -DMODE=command -P ${TRAJCHECK_GOLDEN_RUNNER})
endfunction()

# The example suite: candidate A passes the release gates, candidate B (a regression) does not.
trajcheck_eval_golden(example_json ${EVAL_EXAMPLE} example.json.expected eval support.suite --format json -j 1)
trajcheck_eval_golden(example_json_parallel ${EVAL_EXAMPLE} example.json.expected eval support.suite --format json -j 3)
trajcheck_eval_golden(example_markdown ${EVAL_EXAMPLE} example.md.expected eval support.suite --format markdown -j 1)
trajcheck_eval_golden(example_text ${EVAL_EXAMPLE} example.text.expected eval support.suite -j 1)
# k = 3 runs per case (nondeterminism.suite): pass@k, pass^k, pass rate, flaky cases.
trajcheck_eval_golden(k_runs_text ${EVAL_EXAMPLE} k-runs.text.expected eval nondeterminism.suite -j 1)
trajcheck_eval_golden(k_runs_json ${EVAL_EXAMPLE} k-runs.json.expected eval nondeterminism.suite --format json -j 2)
trajcheck_eval_golden(example_b_text ${EVAL_EXAMPLE} example-b.text.expected
                      eval support.suite --runs runs/candidate-b.jsonl -j 1)
trajcheck_eval_golden(example_b_markdown ${EVAL_EXAMPLE} example-b.md.expected
                      eval support.suite --runs runs/candidate-b.jsonl --format markdown -j 1)
trajcheck_eval_golden(example_b_junit ${EVAL_EXAMPLE} example-b.junit.expected
                      eval support.suite --runs runs/candidate-b.jsonl --format junit -j 1)
# compare: a known delta, and the same bootstrap intervals for the same seed.
trajcheck_eval_golden(compare_text ${EVAL_EXAMPLE} compare.text.expected
                      compare reports/release-41.json reports/candidate-b.json --seed 7)
trajcheck_eval_golden(compare_json ${EVAL_EXAMPLE} compare.json.expected
                      compare reports/release-41.json reports/candidate-b.json --seed 7 --format json)
trajcheck_eval_golden(compare_markdown ${EVAL_EXAMPLE} compare.md.expected
                      compare reports/release-41.json reports/candidate-b.json --seed 7 --format markdown)
# compare refuses what it cannot read whole: broken JSON (located FILE:LINE:COL), a share out
# of [0, 1], a case without a case_id, a baseline metric out of range.
trajcheck_eval_golden(compare_broken_json ${EVAL_DATA}/compare compare-broken.expected compare ok.json broken.json)
trajcheck_eval_golden(compare_huge_share ${EVAL_DATA}/compare compare-huge.expected compare huge.json ok.json)
trajcheck_eval_golden(compare_no_case_id ${EVAL_DATA}/compare compare-no-id.expected compare ok.json no-id.json)
trajcheck_eval_golden(compare_metric_share ${EVAL_DATA}/compare compare-shares.expected compare shares.json ok.json)
# Reports computed from other rules, cases, catalog or fixtures: a warning, or with
# --require-same an error (exit 2).
# --fail-on-regression: exit 1 when a case flipped pass -> fail (or an overall interval lies on
# the worse side of 0), exit 0 for the same run twice.
trajcheck_eval_golden(compare_fail_on_regression ${EVAL_DATA}/compare compare-regression.expected
                      compare ok.json flip.json --resamples 10 --fail-on-regression)
trajcheck_eval_golden(compare_no_regression ${EVAL_DATA}/compare compare-no-regression.expected
                      compare ok.json ok.json --resamples 10 --fail-on-regression --format markdown)
# -o to a file that cannot be written: said on standard error, exit 2 (eval, compare and history
# share the writer).
trajcheck_eval_golden(compare_output_unwritable ${EVAL_DATA}/compare compare-output-unwritable.expected
                      compare ok.json ok.json --resamples 10 -o no-such-folder/compare.txt)
trajcheck_eval_golden(eval_output_unwritable ${EVAL_EXAMPLE} eval-output-unwritable.expected
                      eval support.suite -j 1 -o no-such-folder/report.txt)
trajcheck_eval_golden(compare_inputs ${EVAL_DATA}/compare compare-inputs.expected
                      compare inputs-a.json inputs-b.json --resamples 10)
trajcheck_eval_golden(compare_inputs_required ${EVAL_DATA}/compare compare-inputs-required.expected
                      compare inputs-a.json inputs-b.json --require-same)
trajcheck_eval_golden(compare_inputs_same ${EVAL_DATA}/compare compare-inputs-same.expected
                      compare inputs-a.json inputs-a.json --require-same --resamples 10)
# tau-bench retail judged against its own tasks (real data; policy rules of rules/tau-retail.rules).
trajcheck_eval_golden(tau_retail_markdown ${PROJECT_SOURCE_DIR}/examples/tau-retail tau-retail.md.expected
                      eval tau-retail.suite --error-pattern ^Error --format markdown -j 2)
# Every gate kind passing and failing; each control flow; abstention; stale and unmatched.
trajcheck_eval_golden(gates_text ${EVAL_DATA} gates.text.expected eval gates.suite -j 1)
trajcheck_eval_golden(gates_json ${EVAL_DATA} gates.json.expected eval gates.suite --format json -j 1)
trajcheck_eval_golden(gates_b_text ${EVAL_DATA} gates-b.text.expected eval gates.suite --runs runs-b.jsonl -j 1)
trajcheck_eval_golden(bad_suite ${EVAL_DATA} bad-suite.expected eval bad.suite)
trajcheck_eval_golden(bad_gate_rule ${EVAL_DATA} bad-gate-rule.expected eval bad-gate-rule.suite)
# Coding-agent session logs as runs: one run per session, joined to its case by its sessionId.
trajcheck_eval_golden(sessions_text ${EVAL_DATA} sessions.text.expected eval sessions.suite -j 1)
trajcheck_eval_golden(bad_cases ${EVAL_DATA} bad-cases.expected eval bad-cases.suite)
# A rules file's aliases apply to scoring: `Search` is scored as the expected search_documents.
trajcheck_eval_golden(aliases_text ${EVAL_DATA}/aliases aliases.text.expected eval aliases.suite -j 1)
# OTLP runs exported in batches: one run per trace, the root span's latency, the model calls' tokens.
trajcheck_eval_golden(otlp_text ${EVAL_DATA} otlp.text.expected eval otlp.suite -j 2)
trajcheck_eval_golden(case_new ${EVAL_DATA} case-new.expected
                      case new --from-trace runs.jsonl --case-id act-regression --note "reviewer: fine as is"
                      --suite gates.suite --field kind=k1 --catalog-version v1)

# The html reports in a real browser (skipped, with a message, only if chromium cannot be installed).
add_test(NAME eval.browser_html
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/golden/eval/browser_test.sh $<TARGET_FILE:trajcheck_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(eval.browser_html PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)

# Datasets that stay honest (examples/datasets): fixtures, injected failures with the recovery
# tables, the synthetic split from `case vary`, and an external grader, in every report format
# (no grader cache: the reports say nothing of a cache). `case vary` writes exactly the bytes
# committed under cases/synthetic/.
set(DATASETS_EXAMPLE ${PROJECT_SOURCE_DIR}/examples/datasets)
trajcheck_eval_golden(datasets_text ${DATASETS_EXAMPLE} datasets.text.expected
                      eval datasets.suite --grader-cache - -j 2)
trajcheck_eval_golden(datasets_json ${DATASETS_EXAMPLE} datasets.json.expected
                      eval datasets.suite --grader-cache - --format json -j 1)
trajcheck_eval_golden(datasets_markdown ${DATASETS_EXAMPLE} datasets.md.expected
                      eval datasets.suite --grader-cache - --format markdown -j 1)
trajcheck_eval_golden(datasets_junit ${DATASETS_EXAMPLE} datasets.junit.expected
                      eval datasets.suite --grader-cache - --format junit -j 1)
add_test(NAME eval.vary_example_bytes
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/golden/eval/vary_test.sh $<TARGET_FILE:trajcheck_cli> ${DATASETS_EXAMPLE}
                 ${CMAKE_CURRENT_BINARY_DIR}/vary-example)

# Eval history: `eval --record` three runs into a fresh database, `history` in text and json
# against goldens (UPDATE_GOLDEN=1 rewrites them), --fail-on-regression, bad databases.
add_test(NAME eval.golden.history
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/golden/eval/history_test.sh $<TARGET_FILE:trajcheck_cli> ${PROJECT_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/history-golden)
# The history's html chart in a real browser: one point per run per metric, nothing fetched.
add_test(NAME eval.browser_history
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/golden/eval/history_browser_test.sh $<TARGET_FILE:trajcheck_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(eval.browser_history PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# Loop depth counts cycles (search -> read five times: 5); duplicates repeat a successful call.
trajcheck_eval_golden(loops ${EVAL_DATA}/loops loops.text.expected eval loops.suite -j 1)
# case vary's variation commands: derived inputs from a deterministic stand-in for a paraphraser,
# cached; a failing command is a located error (exit 2).
add_test(NAME eval.vary_command
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/golden/eval/vary_command_test.sh $<TARGET_FILE:trajcheck_cli>
                 ${EVAL_DATA}/vary-command ${CMAKE_CURRENT_BINARY_DIR}/vary-command)
trajcheck_eval_golden(vary_command_broken ${EVAL_DATA}/vary-command vary-command-broken.expected
                      case vary vary.suite --from refund-1 --kinds broken --seed 3 --out out-broken --cache -)
trajcheck_eval_golden(vary_command_unknown_kind ${EVAL_DATA}/vary-command vary-command-unknown.expected
                      case vary vary.suite --from refund-1 --kinds paraphrse --seed 3 --out out-unknown --cache -)
