"""The Local Memory writer: discovery, chunking, graph extraction, embedding, storage, jobs."""
