# Golden CLI tests of `trajcheck score` (tests/data/score inputs, tests/golden/score expectations).
set(SCORE_DATA ${CMAKE_CURRENT_SOURCE_DIR}/data/score)

function(trajcheck_score_golden name expected)
  # Arguments travel as one '|'-separated string (a list would be split by add_test).
  string(REPLACE ";" "|" args "${ARGN}")
  add_test(NAME score.golden.${name}
           COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:trajcheck_cli> -DWORKDIR=${SCORE_DATA}
                   -DEXPECTED=${CMAKE_CURRENT_SOURCE_DIR}/golden/score/${expected} "-DARGS=${args}"
                   -DMODE=command -P ${TRAJCHECK_GOLDEN_RUNNER})
endfunction()

trajcheck_score_golden(jsonl records.jsonl.expected score --format jsonl -j 1 records.jsonl)
trajcheck_score_golden(jsonl_parallel records.jsonl.expected score --format jsonl -j 3 records.jsonl)
trajcheck_score_golden(shapes shapes.jsonl.expected
                       score --format jsonl -j 1 --alias lookup=order_get --selection recall shapes.jsonl)
trajcheck_score_golden(text records.text.expected score -j 1 records.jsonl)
trajcheck_score_golden(json agentevals.json.expected
                       score --format json -j 1 --tool-args superset agentevals.jsonl)
trajcheck_score_golden(bad bad.jsonl.expected score --format jsonl -j 1 bad.jsonl)
trajcheck_score_golden(options records.options.expected
                       score --format jsonl -j 1 --multiset --selection f1 --weights 1,1
                       --min-order-length 3 --tool-args superset records.jsonl)
trajcheck_score_golden(bad_weights bad_weights.expected score --weights 1 records.jsonl)
# Thresholds: on the means (one passing, one failing with its shortfall, one without data),
# and per record (the failing ids), in text and json.
trajcheck_score_golden(thresholds_mean thresholds.text.expected
                       score -j 2 --quiet --min-overall 0.95 --min-selection 0.9 --min-ordering 0.9 records.jsonl)
trajcheck_score_golden(thresholds_per_record thresholds.per_record.json.expected
                       score --format json -j 2 --min-overall 0.8 --min-ordering 0.7 --per-record records.jsonl)
trajcheck_score_golden(thresholds_pass thresholds.pass.expected score -j 1 --quiet --min-selection 0.1 records.jsonl)
trajcheck_score_golden(per_record_alone per_record_alone.expected score --per-record records.jsonl)
# The readers' other formats on the actual side: Bedrock, AgentDojo, LangChain.
trajcheck_score_golden(formats formats.jsonl.expected score --format jsonl -j 1 formats.jsonl)
# A coding-agent session log (the array of its lines) on the actual side.
trajcheck_score_golden(session session.jsonl.expected score --format jsonl -j 1 session.jsonl)
# Duplicates repeat an earlier successful call (a repeat of a failed one is a retry): records
# with repeats go through the general reader, which reads the results' errors.
trajcheck_score_golden(duplicates duplicates.jsonl.expected score --format jsonl -j 1 duplicates.jsonl)
