"""Per-endpoint concurrency and rate limits shared by every process that calls a model.

With Redis (workers, the `collect_answers` command, several hosts) the limits hold across
processes: a slot is a member of a sorted set scored by its expiry, so a process killed
while holding a slot frees it when the lease runs out; the rate is a sliding one-minute
log of call times. Without Redis (the embedded single-process setup) the same limits are
kept in this process's memory.
"""

import os
import socket
import threading
import time
import uuid
from collections import deque
from contextlib import contextmanager

import redis
from django.conf import settings

# A slot outlives a call by this margin; a dead holder's slot is reclaimed after it.
SLOT_LEASE_MARGIN_SECONDS = 30
POLL_SECONDS = 0.02

_ACQUIRE_SLOT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
  redis.call('EXPIRE', KEYS[1], ARGV[5])
  return 1
end
return 0
"""

# Returns 0 when a call may start now, or the milliseconds to wait for the window to
# have room.
_TAKE_RATE = """
local window_start = tonumber(ARGV[1]) - 60000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', window_start)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
  redis.call('EXPIRE', KEYS[1], 120)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, math.floor(tonumber(oldest[2]) - window_start))
"""


HOST = socket.gethostname()


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _RedisLimiter:
    def __init__(self, url: str):
        self.client = redis.Redis.from_url(url, socket_timeout=5)
        self.acquire_slot = self.client.register_script(_ACQUIRE_SLOT)
        self.take_rate = self.client.register_script(_TAKE_RATE)

    @contextmanager
    def slot(self, endpoint_id, concurrency: int, lease_seconds: float):
        key = f"collection:endpoint:{endpoint_id}:slots"
        # The holder's host and pid in the token let a restarted process on the same host
        # take back the slots of one killed there at once, without waiting for the lease.
        token = f"{HOST}:{os.getpid()}:{uuid.uuid4().hex}"
        lease = int(lease_seconds + SLOT_LEASE_MARGIN_SECONDS)
        while not self.acquire_slot(
            keys=[key], args=[time.time(), concurrency, time.time() + lease, token, lease + 60]
        ):
            self.release_dead_holders(key)
            time.sleep(POLL_SECONDS)
        try:
            yield
        finally:
            self.client.zrem(key, token)

    def release_dead_holders(self, key: str):
        for member in self.client.zrange(key, 0, -1):
            host, _, rest = member.decode().partition(":")
            pid = rest.partition(":")[0]
            if host == HOST and pid.isdigit() and not _process_alive(int(pid)):
                self.client.zrem(key, member)

    def try_take(self, endpoint_id, rate_per_minute: int) -> float:
        """Take a place in the minute's window: 0, or the seconds until one frees up."""
        key = f"collection:endpoint:{endpoint_id}:calls"
        wait_ms = self.take_rate(
            keys=[key], args=[int(time.time() * 1000), rate_per_minute, uuid.uuid4().hex]
        )
        return wait_ms / 1000

    def wait_for_rate(self, endpoint_id, rate_per_minute: int):
        while wait := self.try_take(endpoint_id, rate_per_minute):
            time.sleep(min(wait, 1.0))


class _LocalLimiter:
    def __init__(self):
        self.lock = threading.Condition()
        self.busy: dict[int, int] = {}
        self.calls: dict[int, deque] = {}

    @contextmanager
    def slot(self, endpoint_id, concurrency: int, lease_seconds: float):
        with self.lock:
            while self.busy.get(endpoint_id, 0) >= concurrency:
                self.lock.wait()
            self.busy[endpoint_id] = self.busy.get(endpoint_id, 0) + 1
        try:
            yield
        finally:
            with self.lock:
                self.busy[endpoint_id] -= 1
                self.lock.notify_all()

    def try_take(self, endpoint_id, rate_per_minute: int) -> float:
        with self.lock:
            calls = self.calls.setdefault(endpoint_id, deque())
            now = time.monotonic()
            while calls and calls[0] <= now - 60:
                calls.popleft()
            if len(calls) < rate_per_minute:
                calls.append(now)
                return 0.0
            return max(calls[0] + 60 - now, POLL_SECONDS)

    def wait_for_rate(self, endpoint_id, rate_per_minute: int):
        while wait := self.try_take(endpoint_id, rate_per_minute):
            time.sleep(min(wait, 1.0))


_limiters: dict[str, object] = {}
_limiters_lock = threading.Lock()


def endpoint_limiter():
    url = settings.REDIS_URL
    with _limiters_lock:
        if url not in _limiters:
            _limiters[url] = _RedisLimiter(url) if url else _LocalLimiter()
        return _limiters[url]


@contextmanager
def endpoint_call_permit(endpoint):
    """Hold one of the endpoint's concurrent slots and one place in its per-minute rate
    for the duration of a call."""
    limiter = endpoint_limiter()
    key = endpoint.limiter_key
    with limiter.slot(key, endpoint.concurrency, endpoint.timeout_seconds):
        limiter.wait_for_rate(key, endpoint.rate_per_minute)
        yield
