#!/bin/sh
# A `cmd:` agent in any language, with no JSON at all: every line it prints is assistant text, and all of
# it together is the answer.
#
#   sredrill test evals/ --agent cmd:examples/agents/plain_agent.sh
#
# The Task arrives on stdin as JSON; this agent reads it only to show its size. Its run id is in
# $SREDRILL_RUN_ID.
task=$(cat)
echo "plain agent for run ${SREDRILL_RUN_ID:-unknown}: received a task of ${#task} characters."
echo "I did not investigate, so I cannot name a root cause."
