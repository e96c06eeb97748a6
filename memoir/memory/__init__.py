"""Long-term memory: the semantic hot path, retrieval, episodic capture and profile sync."""
