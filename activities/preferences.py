"""Preference memories learn from human decisions (seed 000 `update_memory`)."""

from temporalio import activity

from activities.deps import Deps
from memoir.models import PreferenceUpdate, names
from memoir.preference_update import request_for_update, updated_preferences


class PreferenceActivities:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    @activity.defn(name=names.UPDATE_PREFERENCES)
    async def update_preferences(self, update: PreferenceUpdate) -> list[str]:
        """A targeted update stored as a new version tagged with the decision that caused it.

        A triage decision on an email writes a lesson scoped to that email (sender, domain or
        subject pattern: `memoir.lessons`) under the heading of its action; feedback
        on or an edit of a draft writes only what is general (`memoir.llm.offline_preferences`).
        """
        store = self._deps.stores.preferences
        current = await store.get_memory(update.user_id, update.namespace)
        request = request_for_update(update, current)
        result = await updated_preferences(self._deps.llm, request)
        version = await store.put(
            update.user_id,
            update.namespace,
            result.user_preferences,
            decision=update.decision,
            turn_id=update.turn_id,
        )
        activity.logger.info(
            "preferences.update %s v%s (%s): %s",
            update.namespace,
            version.version,
            update.decision,
            result.chain_of_thought,
        )
        return [f"preferences.update:{update.namespace}:v{version.version}:{update.decision}"]
