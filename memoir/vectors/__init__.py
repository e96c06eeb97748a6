"""Vector stores: one interface, pgvector (default) and Pinecone (scale-out)."""
