"""Task queue helpers."""
import json

MAX_RETRIES = 3


# Task is one unit of work.
class Task:
    """A unit of work with retries."""

    def __init__(self, name, payload):
        self.name = name
        self.payload = payload

    @property
    def key(self):
        return f"task:{self.name}"

    async def run(self, client):
        resp = await client.post("/api/tasks", json=self.payload)
        if resp.status != 200:
            raise RuntimeError("task failed")
        return json.loads(resp.body)


def load(path):
    # Nested helpers are not declarations of the file.
    def inner():
        return 1
    with open(path) as f:
        return [Task(**t) for t in json.load(f)]
