#!/bin/sh
# The namespace and Memoir's search attributes on the compose Temporal server (runs in
# temporalio/admin-tools, after the server is healthy). Idempotent: safe on every `up`.
# The attributes are temporal/devserver.py's SEARCH_ATTRIBUTE_TYPES (tests/deploy checks it).
set -eu
: "${TEMPORAL_ADDRESS:?}" "${TEMPORAL_NAMESPACE:?}"

# The server's frontend says SERVING (2 minutes at most).
tries=0
until temporal operator cluster health 2>/dev/null | grep -q SERVING; do
  tries=$((tries + 1))
  if [ "$tries" -ge 120 ]; then
    echo "Temporal at $TEMPORAL_ADDRESS is not serving" >&2
    exit 1
  fi
  sleep 1
done

if ! temporal operator namespace describe --namespace "$TEMPORAL_NAMESPACE" >/dev/null 2>&1; then
  temporal operator namespace create --namespace "$TEMPORAL_NAMESPACE" --retention 7d
fi
# A new namespace reaches the server's namespace cache within seconds; wait for it (2 minutes).
tries=0
until temporal operator search-attribute list --namespace "$TEMPORAL_NAMESPACE" >/dev/null 2>&1; do
  tries=$((tries + 1))
  if [ "$tries" -ge 120 ]; then
    echo "namespace $TEMPORAL_NAMESPACE did not become usable" >&2
    exit 1
  fi
  sleep 1
done

attribute() {
  name=$1
  kind=$2
  if temporal operator search-attribute list --namespace "$TEMPORAL_NAMESPACE" | grep -qw "$name"; then
    echo "search attribute $name exists"
  else
    temporal operator search-attribute create --namespace "$TEMPORAL_NAMESPACE" \
      --name "$name" --type "$kind"
  fi
}

attribute MemoirUserId Keyword
attribute MemoirThreadId Keyword
attribute MemoirChannel Keyword
attribute MemoirClassification Keyword
attribute MemoirHitlKind Keyword
attribute MemoirAwaitingHuman Bool
echo "namespace $TEMPORAL_NAMESPACE and search attributes ready"
