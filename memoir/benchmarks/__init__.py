"""`memoir bench`: the turn and human-in-the-loop benchmarks on the embedded stack (issue 11).

Like the CLI, a composition root: it drives the stack (`temporal.stack`), the API (`api`) and
the activities' dependencies, so nothing else in `memoir` imports it. bench/README.md says what
each figure means; the results go to bench/results/.
"""
